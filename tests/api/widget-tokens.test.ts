// One database: PostgreSQL — token issuing and the Origin rules
/** POST /api/widget/token (docs/contracts.md §6): backend and client-id modes, registered-domain matching, bad requests. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { assertProblem } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { createTestWidgetClient, tokenRequest, type WidgetClient } from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

describe('widget token, backend mode (client_id + client_secret)', () => {
  it('issues a 24-hour Bearer token bound to the client', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com', '*.shop.example']);
    const res = await tokenRequest(server.url, { client_id: client.client_id, client_secret: client.client_secret });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.body.token_type, 'Bearer');
    assert.equal(res.body.expires_in, 86400);
    assert.equal(typeof res.body.access_token, 'string');
    assert.match(res.body.access_token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const header = decodeProtectedHeader(res.body.access_token);
    assert.equal(header.alg, 'HS256');
    const claims = decodeJwt(res.body.access_token);
    assert.equal(claims.exp! - claims.iat!, 86400);
    assert.ok(Math.abs(claims.iat! - Date.now() / 1000) < 60, 'issued now');
    assert.equal(claims.sub, res.body.visitor_id);
  });

  it('gives each token request a new visitor unless the backend names one', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId);
    const creds = { client_id: client.client_id, client_secret: client.client_secret };
    const a = await tokenRequest(server.url, creds);
    const b = await tokenRequest(server.url, creds);
    assert.notEqual(a.body.visitor_id, b.body.visitor_id);
    const c = await tokenRequest(server.url, { ...creds, visitor_id: a.body.visitor_id });
    assert.equal(c.status, 200);
    assert.equal(c.body.visitor_id, a.body.visitor_id);
  });

  it('refuses a wrong secret with 401 and an unknown client with 404', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId);
    const other = await createTestWidgetClient((await createTestAccount('Other')).accountId);
    const cases: Array<{ name: string; body: object; status: number }> = [
      // The last character changed (a random secret may end with 'x' already: 1 run in 62 took it as right).
      {
        name: 'wrong secret',
        body: { client_id: client.client_id, client_secret: `${client.client_secret.slice(0, -1)}${client.client_secret.endsWith('x') ? 'y' : 'x'}` },
        status: 401,
      },
      { name: 'empty secret', body: { client_id: client.client_id, client_secret: '' }, status: 401 },
      { name: "another client's secret", body: { client_id: client.client_id, client_secret: other.client_secret }, status: 401 },
      { name: 'unknown client', body: { client_id: 'wc_0000000000000000', client_secret: client.client_secret }, status: 404 },
      { name: 'unknown client, client-id mode', body: { client_id: 'wc_ZZZZZZZZZZZZZZZZ' }, status: 404 },
    ];
    for (const c of cases) {
      const res = await tokenRequest(server.url, c.body, { origin: 'https://example.com' });
      assertProblem(res, c.status);
      assert.equal(res.body.access_token, undefined, c.name);
    }
  });
});

describe('widget token, client-id mode (Origin must be a registered domain)', () => {
  it('accepts exactly the registered hosts: any port, wildcards for subdomains only, localhost only if registered', async () => {
    const acct = await createTestAccount();
    const apex = await createTestWidgetClient(acct.accountId, ['example.com']);
    const wild = await createTestWidgetClient(acct.accountId, ['*.example.com']);
    const local = await createTestWidgetClient(acct.accountId, ['localhost']);
    const cases: Array<[WidgetClient, string | null, 200 | 403]> = [
      [apex, 'https://example.com', 200],
      [apex, 'http://example.com', 200],
      [apex, 'https://example.com:8443', 200],
      [apex, 'http://EXAMPLE.com:80', 200],
      [apex, 'https://example.com.evil.test', 403],
      [apex, 'https://evil-example.com', 403],
      [apex, 'https://notexample.com', 403],
      [apex, 'https://example.co', 403],
      [apex, new URL('https://ex\u0430mple.com').origin, 403], // Cyrillic a, as a browser sends it (punycode)
      [apex, 'https://example.com/', 200],
      [apex, 'https://example.com/path', 403],
      [apex, 'https://www.example.com', 403],
      [apex, 'https://a.b.example.com', 403],
      [apex, 'ftp://example.com', 403],
      [apex, 'https://user@example.com', 403],
      [apex, 'null', 403],
      [apex, 'example.com', 403],
      [apex, '', 403],
      [apex, null, 403],
      [apex, 'http://localhost:3000', 403],
      [apex, 'http://127.0.0.1', 403],
      [wild, 'https://a.example.com', 200],
      [wild, 'https://a.b.example.com', 200],
      [wild, 'http://shop.example.com:3000', 200],
      [wild, 'https://example.com', 403],
      [wild, 'https://aexample.com', 403],
      [wild, 'https://a.example.com.evil.test', 403],
      [wild, 'https://example.com.a.example.org', 403],
      [local, 'http://localhost', 200],
      [local, 'http://localhost:5173', 200],
      [local, 'http://127.0.0.1:5173', 403],
      [local, 'http://a.localhost', 403],
    ];
    const failures: string[] = [];
    for (const [client, origin, want] of cases) {
      const res = await tokenRequest(server.url, { client_id: client.client_id }, origin === null ? {} : { origin });
      if (res.status !== want) failures.push(`${client.domains.join(',')} from ${JSON.stringify(origin)}: want ${want}, got ${res.status}`);
      else if (want === 200) {
        assert.equal(res.body.token_type, 'Bearer');
        assert.equal(res.body.expires_in, 86400);
        assert.equal(typeof res.body.access_token, 'string');
      } else {
        assertProblem(res, 403);
      }
    }
    assert.deepEqual(failures, []);
  });

  it("binds the token to the client's registered domains", async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com', '*.example.org']);
    const res = await tokenRequest(server.url, { client_id: client.client_id }, { origin: 'https://sub.example.org' });
    assert.equal(res.status, 200);
    assert.deepEqual([...(decodeJwt(res.body.access_token).dom as string[])].sort(), ['*.example.org', 'example.com']);
  });
});

describe('widget token, bad requests', () => {
  it('answers malformed bodies with 400 problem+json', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId);
    const cases: Array<{ body: unknown; param?: string }> = [
      { body: 'not json' },
      { body: '{"client_id": ' },
      { body: '' },
      { body: 'null' },
      { body: '42' },
      { body: '"wc_abc"' },
      { body: '[]' },
      { body: {}, param: 'client_id' },
      { body: { client_id: 12 }, param: 'client_id' },
      { body: { client_id: '' }, param: 'client_id' },
      { body: { client_id: 'not-a-client' }, param: 'client_id' },
      { body: { client_id: client.client_id, client_secret: 42 }, param: 'client_secret' },
      { body: { client_id: client.client_id, client_secret: client.client_secret, visitor_id: 'bad id' }, param: 'visitor_id' },
    ];
    for (const c of cases) {
      const res = await tokenRequest(server.url, c.body, { origin: 'https://example.com' });
      assertProblem(res, 400);
      if (c.param) {
        assert.ok(Array.isArray(res.body.errors), `errors array for ${JSON.stringify(c.body)}`);
        assert.ok(
          res.body.errors.some((e: { param: string }) => e.param === c.param),
          `${c.param} named in ${JSON.stringify(res.body.errors)}`,
        );
      }
    }
  });

  it('allows only POST (and the CORS preflight)', async () => {
    const res = await api(server.url)('/api/widget/token');
    assertProblem(res, 405);
    const pre = await api(server.url)('/api/widget/token', {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
  });
});
