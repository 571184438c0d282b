// One database: PostgreSQL — the limits are counted before the database is asked
/**
 * Hostile input against POST /api/widget/token (issue 9 items 2, 3): limits per address (IPv6 by
 * /64), per client and per visitor, cheap checks before the shared per-client bucket, and the JSON
 * body capped while it streams. Addresses are simulated through X-Forwarded-For from a trusted
 * loopback proxy (TRUST_PROXY=loopback); without that setting the header is ignored (unit test).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assertProblem } from '../helpers/api-fixtures';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import { createTestWidgetClient, tokenRequest } from '../helpers/widget';

const PER_ADDRESS = 6;
const PER_CLIENT = 5;
const PER_VISITOR = 3;
let server: TestServer;
before(
  async () => {
    server = await startTestServer({
      TRUST_PROXY: 'loopback',
      TOKEN_RATE_PER_IP_PER_MINUTE: String(PER_ADDRESS),
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: String(PER_CLIENT),
      TOKEN_RATE_PER_VISITOR_PER_MINUTE: String(PER_VISITOR),
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

let nextAddress = 1;
const freshAddress = () => `198.51.${Math.floor(nextAddress / 250)}.${(nextAddress++ % 250) + 1}`;
const from = (address: string, headers: Record<string, string> = {}) => ({ 'x-forwarded-for': address, ...headers });

describe('token requests: cheap checks before the per-client bucket', () => {
  it("a flood of unauthenticated requests from many addresses leaves the tenant's budget whole", async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const FLOOD: Array<{ name: string; body: unknown; headers: Record<string, string>; status: number }> = [
      { name: 'wrong secret', body: { client_id: client.client_id, client_secret: 'wcs_wrong' }, headers: {}, status: 401 },
      { name: 'foreign Origin', body: { client_id: client.client_id }, headers: { origin: 'https://evil.example' }, status: 403 },
      { name: 'no Origin', body: { client_id: client.client_id }, headers: {}, status: 403 },
      { name: 'bad shape', body: { client_id: client.client_id, visitor_id: 'nope' }, headers: { origin: 'https://shop.example' }, status: 400 },
      { name: 'unknown client', body: { client_id: 'wc_AAAAAAAAAAAAAAAA' }, headers: { origin: 'https://shop.example' }, status: 404 },
    ];
    const started = Date.now();
    let sent = 0;
    for (let a = 0; a < 20; a++) {
      const address = freshAddress();
      for (const f of FLOOD) {
        const res = await tokenRequest(server.url, f.body, from(address, f.headers));
        assert.equal(res.status, f.status, `${f.name}: ${JSON.stringify(res.body)}`);
        sent++;
      }
    }
    const perRequest = (Date.now() - started) / sent;
    assert.ok(perRequest < 100, `refusals took ${perRequest.toFixed(1)} ms each`);
    // The tenant's widget still gets its whole budget, from a new address as from anywhere.
    for (let i = 0; i < PER_CLIENT; i++) {
      const res = await tokenRequest(server.url, { client_id: client.client_id }, from(freshAddress(), { origin: 'https://shop.example' }));
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const over = await tokenRequest(server.url, { client_id: client.client_id }, from(freshAddress(), { origin: 'https://shop.example' }));
    assertProblem(over, 429);
    assert.match(over.body.detail, /this client/);
    assert.match(over.headers.get('retry-after') ?? '', /^\d+$/);
  });
});

describe('token requests: per address, per visitor', () => {
  it('one address gets PER_ADDRESS requests of any kind, then 429 with Retry-After; other addresses are unaffected', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const address = freshAddress();
    for (let i = 0; i < PER_ADDRESS; i++) {
      const res = await tokenRequest(server.url, { client_id: 'wc_AAAAAAAAAAAAAAAB' }, from(address, { origin: 'https://shop.example' }));
      assert.equal(res.status, 404);
    }
    const refused = await tokenRequest(server.url, { client_id: client.client_id }, from(address, { origin: 'https://shop.example' }));
    assertProblem(refused, 429);
    assert.match(refused.body.detail, /this address/);
    const retry = Number(refused.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    assert.match(refused.headers.get('access-control-expose-headers') ?? '', /Retry-After/i);
    const other = await tokenRequest(server.url, { client_id: client.client_id }, from(freshAddress(), { origin: 'https://shop.example' }));
    assert.equal(other.status, 200);
  });

  it('IPv6 addresses share one budget per /64; another /64 has its own', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const body = { client_id: 'wc_AAAAAAAAAAAAAAAC' };
    for (let i = 0; i < PER_ADDRESS; i++) {
      const res = await tokenRequest(server.url, body, from(`2001:db8:77:1::${(i + 1).toString(16)}`, { origin: 'https://shop.example' }));
      assert.equal(res.status, 404);
    }
    const sameNet = await tokenRequest(
      server.url,
      { client_id: client.client_id },
      from('2001:db8:77:1:abcd:1234:5678:9abc', { origin: 'https://shop.example' }),
    );
    assertProblem(sameNet, 429);
    const otherNet = await tokenRequest(server.url, { client_id: client.client_id }, from('2001:db8:77:2::1', { origin: 'https://shop.example' }));
    assert.equal(otherNet.status, 200);
  });

  it('an integrator backend proving its secret is not limited as one address; the client budget still holds', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const backend = freshAddress();
    const statuses: number[] = [];
    for (let i = 0; i < PER_CLIENT + 1; i++) {
      statuses.push((await tokenRequest(server.url, { client_id: client.client_id, client_secret: client.client_secret }, from(backend))).status);
    }
    assert.deepEqual(statuses, [...Array(PER_CLIENT).fill(200), 429], 'PER_CLIENT > PER_ADDRESS is not needed: the backend is limited by its client only');
  });

  it('a named visitor gets PER_VISITOR tokens a minute, whatever address it comes from; another visitor is unaffected', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const visitor = 'v_visitorAAAAAAAAAAAAAA';
    for (let i = 0; i < PER_VISITOR; i++) {
      const res = await tokenRequest(
        server.url,
        { client_id: client.client_id, visitor_id: visitor },
        from(freshAddress(), { origin: 'https://shop.example' }),
      );
      assert.equal(res.status, 200);
    }
    const refused = await tokenRequest(
      server.url,
      { client_id: client.client_id, visitor_id: visitor },
      from(freshAddress(), { origin: 'https://shop.example' }),
    );
    assertProblem(refused, 429);
    assert.match(refused.body.detail, /this visitor/);
    const other = await tokenRequest(
      server.url,
      { client_id: client.client_id, visitor_id: 'v_visitorBBBBBBBBBBBBBB' },
      from(freshAddress(), { origin: 'https://shop.example' }),
    );
    assert.equal(other.status, 200);
  });
});

/** A raw POST; `chunks` bytes in `chunkSize` pieces, chunked unless `contentLength` is given. */
function rawPost(url: string, path: string, opts: { contentLength?: number; chunkSize: number; chunks: number; headers?: Record<string, string> }) {
  return new Promise<{ status: number | null; body: string; sentBytes: number; error?: string; ms: number }>((resolve) => {
    const started = Date.now();
    const u = new URL(path, url);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-forwarded-for': freshAddress(), ...opts.headers };
    if (opts.contentLength !== undefined) headers['content-length'] = String(opts.contentLength);
    const r = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers });
    let sent = 0;
    let status: number | null = null;
    let body = '';
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      r.destroy();
      resolve({ status, body, sentBytes: sent, error, ms: Date.now() - started });
    };
    r.on('response', (res) => {
      status = res.statusCode ?? null;
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => finish());
      res.on('error', () => finish());
    });
    r.on('error', (e) => finish(e.message));
    const chunk = Buffer.alloc(opts.chunkSize, 0x20);
    let i = 0;
    const pump = () => {
      while (!done && i < opts.chunks) {
        i++;
        sent += chunk.length;
        if (!r.write(chunk)) {
          r.once('drain', pump);
          return;
        }
      }
      if (!done && i >= opts.chunks) r.end();
    };
    pump();
    setTimeout(() => finish('timeout'), 30_000).unref();
  });
}

describe('token request bodies are capped while they stream (16 KiB)', () => {
  const CAP = 16 * 1024;
  it('cap + 1 bytes is 413 with Content-Length (before the body is read) and without it (chunked)', async () => {
    for (const declared of [true, false]) {
      const res = await rawPost(server.url, '/api/widget/token', { chunkSize: CAP + 1, chunks: 1, ...(declared ? { contentLength: CAP + 1 } : {}) });
      assert.equal(res.status, 413, `${declared ? 'declared' : 'chunked'}: ${res.status} ${res.error ?? ''} ${res.body}`);
      assert.match(res.body, /larger than 16384 bytes/);
    }
    // Exactly the cap is read (and refused as JSON, not as too large).
    const atCap = await rawPost(server.url, '/api/widget/token', { chunkSize: CAP, chunks: 1 });
    assert.equal(atCap.status, 400);
  });

  it('an endless chunked body is cut off early and costs the server no memory', async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const runs = await Promise.all(
      Array.from({ length: 8 }, () =>
        rawPost(server.url, '/api/widget/token', { chunkSize: 64 * 1024, chunks: 200 * 16 /* 200 MiB each if nobody stops it */ }),
      ),
    );
    const grownMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    for (const r of runs) {
      assert.ok(r.status === 413 || r.error, `status ${r.status} error ${r.error}`);
      assert.notEqual(r.error, 'timeout');
      assert.ok(r.sentBytes < 50 * 2 ** 20, `the client could send ${(r.sentBytes / 2 ** 20).toFixed(1)} MiB before being cut off`);
      assert.ok(r.ms < 10_000, `cut off after ${r.ms} ms`);
    }
    console.log(
      `endless bodies: 8 × cut off after ≤ ${(Math.max(...runs.map((r) => r.sentBytes)) / 2 ** 20).toFixed(1)} MiB sent, ${Math.max(...runs.map((r) => r.ms))} ms; server RSS +${grownMb.toFixed(1)} MiB`,
    );
    assert.ok(grownMb < 40, `RSS grew ${grownMb.toFixed(1)} MiB`);
  });
});

describe('server action bodies', () => {
  it('an anonymous endless body to a server action is cut off without RSS growth', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(process.cwd(), '.next/server/server-reference-manifest.json'), 'utf8')) as {
      node: Record<string, { filename: string }>;
    };
    const actionId = Object.entries(manifest.node).find(([, v]) => v.filename.includes('api-keys/actions'))![0];
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const targets = ['/api-keys', '/login', '/'];
    const runs = await Promise.all(
      targets.flatMap((p) =>
        Array.from({ length: 3 }, () =>
          rawPost(server.url, p, { chunkSize: 64 * 1024, chunks: 200 * 16, headers: { 'next-action': actionId, 'content-type': 'text/plain;charset=UTF-8' } }),
        ),
      ),
    );
    const grownMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    console.log(
      `server actions, endless bodies: ${runs.map((r) => `${r.status ?? r.error}/${(r.sentBytes / 2 ** 20).toFixed(1)}MiB/${r.ms}ms`).join(' ')}; RSS +${grownMb.toFixed(1)} MiB`,
    );
    for (const r of runs) {
      assert.notEqual(r.error, 'timeout');
      assert.ok(r.sentBytes < 50 * 2 ** 20, `the client could send ${(r.sentBytes / 2 ** 20).toFixed(1)} MiB`);
    }
    assert.ok(grownMb < 40, `RSS grew ${grownMb.toFixed(1)} MiB`);
    for (const r of runs) assert.equal(r.status, 403);
  });

  it("pages refuse other bodies at once; a signed-in admin's action over the declared cap is 413", async () => {
    const plain = await rawPost(server.url, '/', { chunkSize: 1024, chunks: 1 });
    assert.equal(plain.status, 405);
    // A form posted before the page's script ran is a server action too: the same rules (a session here).
    const form = await rawPost(server.url, '/api-keys', { chunkSize: 1024, chunks: 1, headers: { 'content-type': 'multipart/form-data; boundary=x' } });
    assert.equal(form.status, 403);
    const acct = await createTestAccount();
    const session = await signIn(server.url, acct.email, acct.password, from(freshAddress()));
    assert.ok(session.cookie);
    const big = await rawPost(server.url, '/api-keys', {
      chunkSize: 1024,
      chunks: 1,
      contentLength: 22 * 1024 * 1024,
      headers: { 'next-action': 'x'.repeat(42), cookie: session.cookie! },
    });
    assert.equal(big.status, 413);
    assert.ok(big.ms < 2000, `answered after ${big.ms} ms`);
  });
});
