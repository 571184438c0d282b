/**
 * Three instances behind nginx on one PostgreSQL database and one Redis (docs/contracts.md §9), the
 * operations half: readiness per instance and on drain, metrics, JSON logs with request ids, a
 * track change reaching every instance, shared limits, uploads and key revocation across instances.
 *
 * Needs DATABASE_URL (a fresh database: scripts/test.mjs's multi step makes one), REDIS_URL
 * (its own db index; each run its own REDIS_PREFIX) and nginx (.ci/run installs it).
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { parseSuccess, runCli } from '../helpers/cli';
import { freePort, removeInstance, startInstance, startInstances, type Cluster } from '../helpers/instances';
import { nginxAvailable, startNginx, type Nginx } from '../helpers/nginx';

const ready = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL && nginxAvailable());
const PREFIX = `${process.env.REDIS_PREFIX ?? 'svc-test:'}multi-ops-${process.pid}-${Date.now()}:`;
process.env.REDIS_PREFIX = PREFIX;
process.env.SVC_DEMO = '0';
const PER_CLIENT = 6;

let cluster: Cluster;
let lb: Nginx;

before(
  async () => {
    if (!ready) return;
    cluster = await startInstances(3, {
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      REDIS_PREFIX: PREFIX,
      TRUST_PROXY: '1',
      LOG_FORMAT: 'json',
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: String(PER_CLIENT),
      TOKEN_RATE_PER_IP_PER_MINUTE: '1000',
    });
    lb = await startNginx(cluster.instances.map((i) => `127.0.0.1:${i.port}`));
  },
  { timeout: 400_000 },
);

after(
  async () => {
    await lb?.stop();
    await cluster?.close();
    const { getRedis, closeRedis } = await import('../../lib/redis/client');
    const redis = getRedis();
    if (redis) {
      await new Promise((r) => (redis.status === 'ready' ? r(null) : redis.once('ready', r)));
      const keys = await redis.keys(`${PREFIX}*`);
      if (keys.length) await redis.del(...keys);
    }
    await closeRedis();
    const { closeDatabase } = await import('../../db/client');
    await closeDatabase();
  },
  { timeout: 60_000 },
);

type Reply = { status: number; headers: http.IncomingHttpHeaders; body: string; json: () => any };

/** One HTTP request from a chosen loopback source address (nginx hashes clients by address). */
function request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string; from?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'GET', headers: opts.headers, localAddress: opts.from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body) }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Loopback source addresses that nginx sends to different instances, one per instance found. */
async function sourcesPerInstance(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let n = 2; n < 120 && found.size < cluster.instances.length; n++) {
    const from = `127.0.0.${n}`;
    const r = await request(`${lb.url}/healthz`, { from });
    const upstream = String(r.headers['x-upstream']);
    if (r.status === 200 && !found.has(upstream)) found.set(upstream, from);
  }
  return found;
}

async function setup() {
  const { createTestAccount } = await import('../helpers/builders');
  const { createTestWidgetClient } = await import('../helpers/widget');
  const acct = await createTestAccount('Multi Ops Co');
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  return { acct, client };
}

describe('several instances behind nginx: operations', { skip: !ready && 'needs DATABASE_URL, REDIS_URL and nginx' }, () => {
  it('every instance is ready, and so is the address behind nginx', async () => {
    for (const url of [...cluster.urls, lb.url]) {
      const r = await request(`${url}/readyz`);
      assert.equal(r.status, 200, `${url}: ${r.body}`);
      assert.deepEqual(r.json(), { status: 'ready' });
    }
  });

  it('nginx spreads clients over all three instances by address, each client always on the same one', async () => {
    const found = await sourcesPerInstance();
    assert.equal(found.size, 3, `instances reached: ${[...found.keys()].join(', ')}`);
    // the same client always lands on the same instance (long-polling needs it)
    for (const [upstream, from] of found) {
      for (let i = 0; i < 3; i++) assert.equal((await request(`${lb.url}/healthz`, { from })).headers['x-upstream'], upstream);
    }
  });

  it('metrics answer each instance on loopback, but not through nginx (a proxied request is never loopback)', async () => {
    for (const url of cluster.urls) {
      const r = await request(`${url}/metrics`);
      assert.equal(r.status, 200);
      assert.match(r.body, /^svc_widget_sockets_connected \d+$/m);
      assert.match(r.body, /^svc_db_pool_connections\{state="active"\} [1-9]\d*$/m);
    }
    const proxied = await request(`${lb.url}/metrics`);
    assert.equal(proxied.status, 403);
    assert.match(String(proxied.headers['content-type']), /application\/problem\+json/);
  });

  it('logs JSON lines with the request id the client sent, on the instance that answered', async () => {
    const id = `multi-ops-${Date.now()}`;
    const r = await request(`${lb.url}/healthz`, { headers: { 'x-request-id': id }, from: '127.0.0.9' });
    assert.equal(r.headers['x-request-id'], id);
    const served = cluster.instances.find((i) => `127.0.0.1:${i.port}` === r.headers['x-upstream'])!;
    let line: Record<string, unknown> | undefined;
    for (let t = 0; t < 40 && !line; t++) {
      line = served
        .stdout()
        .split('\n')
        .filter((l) => l.includes(id))
        .map((l) => JSON.parse(l) as Record<string, unknown>)[0];
      if (!line) await sleep(50);
    }
    assert.ok(line, 'a log line with the request id');
    assert.equal(line.req_id, id);
    assert.equal(line.route, '/healthz');
    assert.equal(line.status, 200);
    assert.equal(typeof line.duration_ms, 'number');
    assert.equal(line.level, 30);
    assert.equal(typeof line.time, 'string');
    // The client address under TRUST_PROXY (nginx's X-Forwarded-For), not the proxy that connected.
    assert.equal(line.client, '127.0.0.9');
    assert.equal(line.peer, '127.0.0.1');
    for (const other of cluster.instances.filter((i) => i !== served)) assert.ok(!other.stdout().includes(id));
  });

  it('a track change through the CLI reaches all three instances at once (Redis invalidation, not the 5 s cache)', async () => {
    const releases = JSON.parse(fs.readFileSync('lib/widget/releases.json', 'utf8')) as {
      tracks: Record<string, string>;
      releases: Array<{ version: string }>;
    };
    const before = releases.tracks.lts!;
    const next = releases.releases.map((r) => r.version).find((v) => v !== before)!;
    const manifest = async (url: string) => (await request(`${url}/chatbot/manifests/tracks/lts/manifest.json`)).json().version as string;
    for (const url of cluster.urls) assert.equal(await manifest(url), before); // now cached on every instance
    const cli = (args: string[]) =>
      runCli(['widget', 'track', ...args], { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: PREFIX });
    try {
      assert.deepEqual(parseSuccess(await cli(['set', '--track', 'lts', '--version', next])), { track: 'lts', version: next, previous: before });
      const changedAt = Date.now();
      for (const url of cluster.urls) {
        while ((await manifest(url)) !== next) {
          assert.ok(Date.now() - changedAt < 2500, `${url} still serves ${before} ${Date.now() - changedAt} ms after the change`);
          await sleep(50);
        }
      }
    } finally {
      parseSuccess(await cli(['rollback', '--track', 'lts']));
    }
    for (const url of cluster.urls) {
      const deadline = Date.now() + 6000;
      while ((await manifest(url)) !== before) {
        assert.ok(Date.now() < deadline, 'rolled back everywhere');
        await sleep(50);
      }
    }
  });

  it('a limit is counted across instances: token requests per client through nginx from clients on different instances', async () => {
    const { client } = await setup();
    const sources = [...(await sourcesPerInstance()).values()];
    assert.ok(sources.length >= 2, `clients spread over ${sources.length} instance(s)`);
    const body = JSON.stringify({ client_id: client.client_id, client_secret: client.client_secret });
    const statuses: number[] = [];
    for (let i = 0; i < PER_CLIENT + 3; i++) {
      const r = await request(`${lb.url}/api/widget/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        from: sources[i % sources.length],
      });
      statuses.push(r.status);
    }
    assert.deepEqual(statuses, [...Array(PER_CLIENT).fill(200), 429, 429, 429]);
  });

  it('an upload made through one instance is attached and read through another', async () => {
    const { client } = await setup();
    const { backendToken, connectVisitor, upload } = await import('../helpers/widget');
    const [a, b] = cluster.instances;
    const token = await backendToken(a!.url, client);
    const phrase = `The harbour ferry leaves at ${Date.now() % 1000} past noon.`;
    const up = await upload(a!.url, token.access_token, [{ name: 'ferry.txt', data: Buffer.from(`${phrase}\n`), type: 'text/plain' }]);
    assert.equal(up.status, 201, JSON.stringify(up.body));
    const visitor = await connectVisitor(b!.url, token.access_token, 'https://example.com');
    try {
      const ack = await visitor.ok('ask', {
        client_message_id: `m-${Date.now()}`,
        text: 'When does the harbour ferry leave?',
        attachments: [up.body.upload_id],
      });
      const end = await visitor.finished(ack.response_id as string, 20_000);
      assert.equal(end.type, 'answer.done');
      assert.match(JSON.stringify(end), /harbour ferry leaves/);
    } finally {
      visitor.close();
    }
  });

  it('a revoked API key stops on every instance within 1 s', async () => {
    const { acct } = await setup();
    const { getRedis } = await import('../../lib/redis/client');
    const redis = getRedis()!;
    if (redis.status !== 'ready') await new Promise((r) => redis.once('ready', r));
    const list = (url: string) => request(`${url}/customer-api/v2/conversation?resultsPerPage=1`, { headers: { authorization: `Bearer ${acct.key}` } });
    for (const url of cluster.urls) assert.equal((await list(url)).status, 200); // warm every instance's key cache
    const { revokeApiKey } = await import('../../lib/accounts/service');
    await revokeApiKey(CLI, acct.accountId, acct.keyId);
    const revokedAt = Date.now();
    const stoppedAfter: number[] = [];
    for (const url of cluster.urls) {
      while ((await list(url)).status !== 401) {
        assert.ok(Date.now() - revokedAt < 3000, `${url} still accepts the key ${Date.now() - revokedAt} ms later`);
        await sleep(25);
      }
      stoppedAfter.push(Date.now() - revokedAt);
    }
    // Polled one after another, so the last instance's time includes the earlier polls.
    assert.ok(Math.max(...stoppedAfter) <= 1000 + 500, `stopped after ${stoppedAfter.join(', ')} ms`);
  });

  it('an instance whose Redis is away is not ready (503 naming Redis) but alive, and ready again when Redis returns', async () => {
    const { spawn } = await import('node:child_process');
    const port = await freePort();
    const startRedis = () => spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    let redis = startRedis();
    const stopRedis = () =>
      new Promise((r) => {
        redis.once('exit', r);
        redis.kill('SIGKILL');
      });
    await sleep(300);
    const inst = await startInstance('instance-redis-away', {
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_PREFIX: PREFIX,
      TRUST_PROXY: '1',
    });
    try {
      assert.equal((await request(`${inst.url}/readyz`)).status, 200);
      await stopRedis();
      const down = await request(`${inst.url}/readyz`);
      assert.equal(down.status, 503);
      assert.equal(down.json().checks.database, 'ok');
      assert.match(down.json().reason, /^redis: /);
      assert.equal((await request(`${inst.url}/healthz`)).status, 200, 'still alive');
      redis = startRedis();
      const deadline = Date.now() + 15_000;
      while ((await request(`${inst.url}/readyz`)).status !== 200) {
        assert.ok(Date.now() < deadline, 'ready again');
        await sleep(100);
      }
    } finally {
      await removeInstance(inst, 'SIGTERM');
      await stopRedis();
    }
  });

  it('SIGTERM: the draining instance answers /readyz 503 at once, nginx keeps serving from the others', async (t) => {
    const last = cluster.instances.at(-1)!;
    const statuses: Array<{ status: number; reason?: string }> = [];
    const exit = last.stop('SIGTERM').then((r) => r.code);
    for (let i = 0; i < 200 && last.running; i++) {
      try {
        const r = await request(`${last.url}/readyz`);
        statuses.push({ status: r.status, reason: r.status === 503 ? r.json().reason : undefined });
      } catch {
        break;
      }
      await sleep(10);
    }
    assert.equal(await exit, 0, `exit code; stderr: ${last.stderr().slice(-500)}`);
    for (let i = 0; i < 6; i++) assert.equal((await request(`${lb.url}/readyz`, { from: `127.0.0.${2 + i}` })).status, 200);
    if (!statuses.some((s) => s.status === 503))
      return t.skip(
        'nothing to finish: the instance exited before a poll saw the drain (the 503 window is covered by chat-instances, which drains with answers in flight)',
      );
    const first = statuses.findIndex((s) => s.status === 503);
    assert.ok(
      statuses.slice(first).every((s) => s.status === 503),
      `never ready again once draining: ${JSON.stringify(statuses)}`,
    );
    assert.match(statuses[first]!.reason!, /draining/);
  });
});
