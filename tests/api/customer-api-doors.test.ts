// One database: PostgreSQL — the two doors share one operation table and one query layer
/**
 * One operation table, two doors: the route files under app/customer-api match the table in both
 * directions, and every request answers the same through Next and through the direct door
 * (lib/customer-api/direct-door.ts): status, headers and body. Unknown paths are problem+json 404s.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { API_BASE, CUSTOMER_OPERATIONS } from '../../lib/customer-api/operations';
import { revokeApiKey } from '../../lib/accounts/service';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { V2 } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

// Modules that reach next-auth load only after the server has set Next's runtime up.
let server: TestServer;
let routing: typeof import('../../lib/customer-api/route');
let setDirectApiEnabled: (on: boolean) => void;
before(async () => {
  server = await startTestServer();
  routing = await import('../../lib/customer-api/route');
  ({ setDirectApiEnabled } = await import('../../lib/customer-api/direct-door'));
});
after(async () => {
  setDirectApiEnabled?.(true);
  await server?.close();
});

const ROUTE_ROOT = path.join(process.cwd(), 'app', 'customer-api');

function routeFiles(dir = ROUTE_ROOT): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? routeFiles(full) : e.name === 'route.ts' ? [full] : [];
  });
}

/** app/customer-api/v2/response/[response_id]/route.ts → '/response/{response_id}' (relative to API_BASE). */
function templateOf(file: string): string {
  const rel = `/${path.relative(ROUTE_ROOT, path.dirname(file)).split(path.sep).join('/')}`;
  assert.ok(`/customer-api${rel}`.startsWith(API_BASE), `${file} lies outside ${API_BASE}`);
  return `/customer-api${rel}`.slice(API_BASE.length).replace(/\[([a-z_]+)\]/g, '{$1}');
}

describe('the operation table and the route files', () => {
  it('every route file exports exactly the handlers the table gives its path, and every table path has a file', async () => {
    const { customerRoutePaths, ROUTE_METHODS, routeHandlers, unknownPathRouteHandlers } = routing;
    const seen = new Set<string>();
    for (const file of routeFiles()) {
      const template = templateOf(file);
      const mod = (await import(file)) as Record<string, unknown>;
      const expected = template === '/[[...unknown]]' ? unknownPathRouteHandlers() : routeHandlers(template);
      for (const m of ROUTE_METHODS) assert.equal(mod[m], expected[m], `${file}: ${m}`);
      assert.equal(mod.HEAD, undefined, `${file}: HEAD is answered from GET`);
      seen.add(template);
    }
    assert.ok(seen.has('/[[...unknown]]'), 'the catch-all route file exists');
    for (const p of customerRoutePaths()) assert.ok(seen.has(p), `route file for ${p}`);
    for (const op of CUSTOMER_OPERATIONS) assert.ok(seen.has(op.path), `route file for ${op.operationId}`);
    assert.equal(seen.size, customerRoutePaths().length + 1, `no route file outside the table: ${[...seen].join(', ')}`);
  });

  it('operation ids are unique and paths follow the {name} template form', () => {
    const ids = CUSTOMER_OPERATIONS.map((o) => o.operationId);
    assert.equal(new Set(ids).size, ids.length);
    for (const op of CUSTOMER_OPERATIONS) {
      assert.match(op.path, /^(\/([a-z_]+|\{[a-z_]+\}))+$/);
      const names = [...op.path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]);
      assert.deepEqual(names.sort(), Object.keys(op.pathParams?.shape ?? {}).sort(), op.operationId);
    }
  });
});

type Raw = { status: number; headers: Record<string, string>; text: string };

async function raw(url: string, init: RequestInit = {}): Promise<Raw> {
  const res = await fetch(url, { ...init, redirect: 'manual' });
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return { status: res.status, headers, text: await res.text() };
}

/**
 * Headers that legitimately differ per request or per transport, and Next's own `Vary` on its
 * router headers (rsc, next-router-*), which no API client sends.
 */
const VOLATILE = new Set(['date', 'x-request-id', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'vary']);

function comparable(r: Raw) {
  const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => !VOLATILE.has(k)));
  let body: unknown = r.text;
  try {
    const parsed = JSON.parse(r.text) as Record<string, unknown>;
    if (parsed && typeof parsed === 'object' && 'request_id' in parsed) {
      assert.equal(parsed.request_id, r.headers['x-request-id'], 'the problem names the request id of its header');
      delete parsed.request_id;
    }
    body = parsed;
  } catch {
    /* not JSON: compare the text */
  }
  return { status: r.status, headers, body };
}

/** The same request through the direct door and through Next. */
async function bothDoors(pathAndQuery: string, init: RequestInit = {}) {
  try {
    setDirectApiEnabled(true);
    const direct = await raw(`${server.url}${pathAndQuery}`, init);
    setDirectApiEnabled(false);
    const viaNext = await raw(`${server.url}${pathAndQuery}`, init);
    return { direct, viaNext };
  } finally {
    setDirectApiEnabled(true);
  }
}

describe('both doors answer alike', () => {
  it('compares status, headers and bodies for every kind of request', async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch!, title: 'Doors' });
    const r1 = responseLine(conv, { question: 'Front door?', created_at: '2026-01-01 10:01:00' });
    const r2 = responseLine(conv, { question: 'Back door?', created_at: '2026-01-01 10:02:00' });
    await importLines(acct.accountId, [conv, r1, r2]);
    const revoked = await createTestAccount();
    await revokeApiKey(CLI, null, revoked.keyId);

    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    const cases: Array<{ path: string; init?: RequestInit; status: number }> = [
      { path: `${V2}/response`, status: 200 },
      { path: `${V2}/response?resultsPerPage=1&sortBy=created_at&sortOrder=asc&foo=bar`, status: 200 },
      { path: `${V2}/response?format=gridjs&query=door`, status: 200 },
      { path: `${V2}/response/${r1.response_id}`, status: 200 },
      { path: `${V2}/response/${r1.response_id.toUpperCase()}`, status: 200 },
      { path: `${V2}/conversation`, status: 200 },
      { path: `${V2}/conversation/${conv.conversation_id}`, status: 200 },
      { path: `${V2}/conversation/${conv.conversation_id}?format=gridjs`, status: 200 },
      { path: `${V2}/response?page=0&pageSize=500`, status: 400 },
      { path: `${V2}/response/${r1.response_id}?format=csv`, status: 400 },
      { path: `${V2}/response/${randomUUID()}`, status: 404 },
      { path: `${V2}/response/not-a-uuid`, status: 404 },
      { path: `${V2}/conversation/${conv.conversation_id}`, init: { headers: auth(other.key) }, status: 404 },
      { path: `${V2}/responses`, status: 404 },
      { path: `${V2}/response/${r1.response_id}/extra`, status: 404 },
      { path: `${V2}/response/x/y`, status: 404 },
      { path: V2, status: 404 },
      { path: `${V2}/response`, init: { method: 'POST', body: '{}' }, status: 405 },
      { path: `${V2}/conversation/${conv.conversation_id}`, init: { method: 'DELETE' }, status: 405 },
      { path: `${V2}/response`, init: { method: 'OPTIONS' }, status: 405 },
      { path: `${V2}/openapi.json`, status: 200 },
      { path: `${V2}/openapi.json`, init: { method: 'OPTIONS' }, status: 204 },
      { path: `${V2}/response`, init: { headers: auth(revoked.key) }, status: 401 },
      { path: `${V2}/response`, init: { headers: auth('svc_live_malformed') }, status: 401 },
      { path: `${V2}/response`, init: { headers: { authorization: 'Basic abc' } }, status: 401 },
      { path: `${V2}/response`, init: { method: 'HEAD' }, status: 200 },
      { path: `${V2}/response/${randomUUID()}`, init: { method: 'HEAD' }, status: 404 },
      { path: `${V2}/nothing/here`, init: { method: 'HEAD' }, status: 404 },
      // Not canonical: the direct door leaves these to Next, so both answers are Next's. (A trailing
      // slash is answered by the direct door itself: tests/api/trailing-slash.test.ts.)
      { path: `${V2}/response/%7A`, status: 404 },
    ];
    for (const c of cases) {
      const headers = new Headers(c.init?.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${acct.key}`);
      const { direct, viaNext } = await bothDoors(c.path, { ...c.init, headers });
      const label = `${c.init?.method ?? 'GET'} ${c.path}`;
      assert.equal(direct.status, c.status, `${label}: ${direct.text.slice(0, 300)}`);
      assert.deepEqual(comparable(direct), comparable(viaNext), label);
      if (c.status === 404 && /\/(responses|extra|y|here)$|v2$/.test(c.path)) {
        const body = JSON.parse(direct.text || '{}') as { operations?: string[]; detail?: string };
        if (c.init?.method !== 'HEAD') {
          assert.match(direct.headers['content-type'] ?? '', /^application\/problem\+json/, label);
          assert.deepEqual(
            body.operations,
            CUSTOMER_OPERATIONS.map((o) => `${o.method} ${API_BASE}${o.path}`),
            label,
          );
          assert.match(body.detail ?? '', /GET \/customer-api\/v2\/response\/\{response_id\}/, label);
        }
      }
    }
  });

  it('answers unknown paths without a key through Next with the same problem+json 404', async () => {
    for (const p of ['/responses', '/response/x/y', '/conversation/a/b/c', '/openapi.yaml', '']) {
      const res = await raw(`${server.url}${V2}${p}`);
      assert.equal(res.status, 404, p);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/, p);
      const body = JSON.parse(res.text) as { status: number; operations: string[]; type: string };
      assert.equal(body.status, 404);
      assert.equal(body.type, 'urn:svc:problem:not-found');
      assert.equal(body.operations.length, CUSTOMER_OPERATIONS.length);
    }
  });
});

/** One raw HTTP/1.1 exchange, so the request line and headers can be anything. */
function rawHttp(port: number, request: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms: ${JSON.stringify(data)}`));
    }, timeoutMs);
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
      // A complete answer: headers plus the declared body.
      const end = data.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(data.slice(0, end));
      if (end >= 0 && length && Buffer.byteLength(data.slice(end + 4)) >= Number(length[1])) {
        clearTimeout(timer);
        socket.end();
        resolve(data);
      }
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.write(request);
  });
}

describe('malformed requests with a key', () => {
  it('answers a malformed Host header instead of dropping the request', async () => {
    const acct = await createTestAccount();
    const port = Number(new URL(server.url).port);
    for (const host of ['a b', '[::1', 'exa mple.com:99999', '%%%']) {
      const answer = await rawHttp(port, `GET ${V2}/response HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${acct.key}\r\nConnection: close\r\n\r\n`);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
      assert.ok(status === 200 || status === 400, `Host ${host}: ${answer.slice(0, 200)}`);
      if (status === 200) assert.match(answer, /"results":\[/);
      else assert.match(answer, /application\/problem\+json/);
    }
  });
});
