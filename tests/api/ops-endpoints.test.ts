// One database: PostgreSQL — the pool's metrics are fullest on PostgreSQL (PGlite has one connection); the rest is the process's
/** GET /readyz, GET /metrics and request ids on one instance (docs/contracts.md §9), on both databases. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDrain } from '../../lib/core/drain';
import { routeTemplate } from '../../lib/ops/http';
import { assertProblem } from '../helpers/api-fixtures';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectVisitor, createTestWidgetClient, eventually, tokenRequest } from '../helpers/widget';

const TOKEN = 'metrics-token-0123456789abcdef';
let server: TestServer;
before(
  async () => {
    server = await startTestServer({ METRICS_TOKEN: TOKEN, TOKEN_RATE_PER_CLIENT_PER_MINUTE: '3' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

/** The value of one sample line of the Prometheus text (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const have = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[2]);
  }
  return undefined;
}

describe('metrics', () => {
  it('answers loopback peers with the Prometheus text of the process, HTTP, sockets, answers, limits and the pool', async () => {
    assert.equal((await get('/healthz')).status, 200);
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const token = await backendToken(server.url, client);
    const visitor = await connectVisitor(server.url, token.access_token, 'https://example.com');
    try {
      for (let i = 0; i < 4; i++) await tokenRequest(server.url, { client_id: client.client_id, client_secret: client.client_secret });
      const res = await get('/metrics');
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      assert.ok(sample(res.text, 'process_cpu_seconds_total')! > 0, 'default process metrics');
      assert.ok(sample(res.text, 'process_resident_memory_bytes')! > 1e6);
      assert.ok(sample(res.text, 'svc_http_request_duration_seconds_count', { method: 'GET', route: '/healthz', status: '200' })! >= 1);
      assert.ok(sample(res.text, 'svc_http_request_duration_seconds_count', { method: 'POST', route: '/api/widget/token', status: '200' })! >= 1);
      assert.ok(sample(res.text, 'svc_http_request_duration_seconds_bucket', { route: '/healthz', le: '+Inf' })! >= 1);
      assert.equal(sample(res.text, 'svc_widget_sockets_connected'), 1);
      assert.equal(sample(res.text, 'svc_answers_in_flight'), 0);
      assert.equal(sample(res.text, 'svc_draining'), 0);
      assert.equal(sample(res.text, 'svc_db_pool_max'), server.kind === 'postgres' ? 10 : 1);
      if (server.kind === 'postgres') assert.ok(sample(res.text, 'svc_db_pool_connections', { state: 'active' })! >= 1, 'the scrape itself is active');
      // no label carries an id: every route label is a template
      const routes = new Set([...res.text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
      for (const r of routes) assert.ok(!/[0-9a-f]{8}-/.test(r!), `route label ${r}`);
    } finally {
      visitor.close();
    }
    await eventually(
      async () => sample((await get('/metrics')).text, 'svc_widget_sockets_connected'),
      (n) => n === 0,
      'the socket gauge back at 0',
    );
  });

  it('counts rate-limit refusals by limiter once the token route refuses', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    let refused = 0;
    for (let i = 0; i < 6; i++) {
      if ((await tokenRequest(server.url, { client_id: client.client_id, client_secret: client.client_secret })).status === 429) refused++;
    }
    assert.equal(refused, 3, 'the per-client limit of 3 refused the rest');
    const text = (await get('/metrics')).text;
    // this client's 3 refusals, and the first test's client's 2 (1 + 4 requests)
    assert.equal(sample(text, 'svc_rate_limit_refusals_total', { limiter: 'widget-token:client' }), 5);
  });

  it('refuses proxied requests without the token (401), accepts the right token, and rejects a wrong one', async () => {
    const proxied = { 'x-forwarded-for': '203.0.113.9' };
    const missing = await get('/metrics', proxied);
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get('content-type') ?? '', /application\/problem\+json/);
    assert.match(String(missing.json().detail), /METRICS_TOKEN/);
    assert.equal((await get('/metrics', { ...proxied, authorization: `Bearer ${TOKEN}` })).status, 200);
    assert.equal((await get('/metrics', { ...proxied, authorization: `Bearer ${TOKEN.slice(0, -1)}x` })).status, 401);
    assert.equal((await get('/metrics', { authorization: 'Bearer short' })).status, 401);
    const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
    assert.equal(post.status, 405);
  });

  it('a loopback peer that carries any forwarding header is not local: refused without the token', async () => {
    const headers: Array<Record<string, string>> = [
      { forwarded: 'for=203.0.113.9' },
      { 'x-forwarded-for': '127.0.0.1' },
      { 'x-real-ip': '127.0.0.1' },
      { 'x-forwarded-host': 'metrics.example' },
      { via: '1.1 nginx' },
      { 'X-Real-IP': '203.0.113.9' },
    ];
    for (const h of headers) {
      const res = await get('/metrics', h);
      assert.equal(res.status, 401, JSON.stringify(h));
      assert.match(String(res.json().detail), /METRICS_TOKEN/);
      assert.equal((await get('/metrics', { ...h, authorization: `Bearer ${TOKEN}` })).status, 200, `${JSON.stringify(h)} with the token`);
    }
    assert.equal((await get('/metrics', { 'x-request-id': 'not-a-forwarding-header' })).status, 200);
  });

  it('labels routes as low-cardinality templates', () => {
    const cases: Array<[string, string]> = [
      ['/customer-api/v2/response/1b4e28ba-2fa1-11d2-883f-0016d3cca427?x=1', '/customer-api/v2/response/:id'],
      ['/customer-api/v2/conversation', '/customer-api/v2/conversation'],
      ['/chatbot/manifests/tracks/stable/manifest.json', '/chatbot/manifests/:kind/:name/manifest.json'],
      ['/_next/static/chunks/abc.js', '/_next/static/*'],
      ['/conversations/abc', '/conversations/:id'],
      ['/wp-admin/../etc/passwd', 'other'],
      ['/readyz', '/readyz'],
    ];
    for (const [url, want] of cases) assert.equal(routeTemplate(url), want, url);
  });
});

describe('request ids', () => {
  it('every response carries X-Request-Id; a well-formed incoming id is kept and reaches problem bodies', async () => {
    const fresh = await get('/healthz');
    assert.match(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const kept = await fetch(`${server.url}/customer-api/v2/response`, { headers: { 'x-request-id': 'trace-abc.123', authorization: 'Bearer nope' } });
    assert.equal(kept.headers.get('x-request-id'), 'trace-abc.123');
    const body = (await kept.json()) as { request_id: string };
    assert.equal(body.request_id, 'trace-abc.123');
    const replaced = await get('/healthz', { 'x-request-id': 'bad id with spaces' });
    assert.notEqual(replaced.headers.get('x-request-id'), 'bad id with spaces');
  });
});

describe('readiness', () => {
  it('is ready while the database answers, then 503 with the reason once the instance drains; /healthz stays 200', async () => {
    const ready = await get('/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.json(), { status: 'ready' });
    assert.equal(ready.headers.get('cache-control'), 'no-store');
    startDrain();
    const draining = await get('/readyz');
    assert.equal(draining.status, 503);
    const body = draining.json() as { status: string; reason: string; checks: Record<string, string> };
    assert.equal(body.status, 'unavailable');
    assert.match(body.reason, /draining/);
    assert.equal(body.checks.database, 'ok');
    assert.equal((await get('/healthz')).status, 200);
    assert.equal(sample((await get('/metrics')).text, 'svc_draining'), 1);
  });

  it('a HEAD answers without a body; other methods are refused with problem+json', async () => {
    const head = await fetch(`${server.url}/readyz`, { method: 'HEAD' });
    assert.equal(head.status, 503);
    const put = await fetch(`${server.url}/readyz`, { method: 'PUT' });
    assertProblem({ status: put.status, headers: put.headers, body: await put.json() } as never, 405);
  });
});
