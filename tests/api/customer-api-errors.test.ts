// One database: PostgreSQL — error shapes of the request checks
/** Customer API v2 errors and protocol: problem details, 400 tables, 405, HEAD, the public OpenAPI document. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { assertEnvelope, assertParamError, assertProblem, assertUnauthorized, V2 } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

async function accountWithRecord() {
  const acct = await createTestAccount();
  const [ch] = await newChannelIds(1);
  const conv = conversationLine({ channel_id: ch! });
  const r = responseLine(conv);
  await importLines(acct.accountId, [conv, r]);
  return {
    acct,
    conv,
    r,
    get: api(server.url, acct.key),
    paths: [`${V2}/response`, `${V2}/response/${r.response_id}`, `${V2}/conversation`, `${V2}/conversation/${conv.conversation_id}`],
  };
}

describe('400 invalid parameters', () => {
  it('lists every invalid parameter, each as the client spelled it', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    const cases: Array<{ path: string; q: string; params: string[] }> = [
      { path: '/response', q: 'page=0&pageSize=500&sortOrder=up', params: ['page', 'pageSize', 'sortOrder'] },
      { path: '/response', q: 'sortBy=nope&channel_id=x&conversation_id=y&format=csv', params: ['sortBy', 'channel_id', 'conversation_id', 'format'] },
      { path: '/conversation', q: 'resultsPerPage=abc&order_by=likes&channel_ids[]=z', params: ['resultsPerPage', 'order_by', 'channel_ids[]'] },
    ];
    for (const c of cases) {
      const res = await get(`${V2}${c.path}?${c.q}`);
      assertProblem(res, 400);
      assert.deepEqual(res.body.errors.map((e: { param: string }) => e.param).sort(), [...c.params].sort(), c.q);
      for (const e of res.body.errors) assert.ok(typeof e.message === 'string' && e.message.length > 0);
      for (const p of c.params) assert.ok(res.body.detail.includes(p), `detail mentions ${p}: ${res.body.detail}`);
    }
  });

  it('checks parameters only after the credentials', async () => {
    const res = await api(server.url)(`${V2}/response?page=0`);
    assertUnauthorized(res);
  });

  it('ignores unknown parameters', async () => {
    const { get, paths } = await accountWithRecord();
    for (const path of paths) {
      const res = await get(`${path}?foo=bar&limit=-1&offset=x&Page=0&RESULTSPERPAGE=0&page_size=0`);
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    }
    const body = assertEnvelope(await get(`${V2}/response?foo=bar&resultsPerPage=1`));
    assert.equal(body.next, null);
    assert.equal(body.count, 1);
  });

  it('is a single table of invalid values per parameter', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    const table: Array<[string, string[]]> = [
      ['page', ['0', '-1', '1.5', 'abc', 'one']],
      ['resultsPerPage', ['0', '101', '1.5', 'abc', '-1', '1000']],
      ['pageSize', ['0', '101', '1.5', 'abc', '-1']],
      ['sort', ['UP', 'ascending', 'D', '1']],
      ['sortOrder', ['UP', 'x']],
      ['order_by', ['question', 'title', 'likes;drop']],
      ['sortBy', ['question', 'title']],
      ['format', ['csv', 'xml', 'json']],
      ['channel_id', ['abc', '1.5', 'x1']],
      ['channel_ids[]', ['abc', '2.5']],
    ];
    for (const path of ['/response', '/conversation']) {
      for (const [param, values] of table) {
        for (const v of values) {
          const res = await get(`${V2}${path}?${param}=${encodeURIComponent(v)}`);
          assertParamError(res, param);
        }
      }
    }
    for (const v of ['abc', '1', 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz']) {
      assertParamError(await get(`${V2}/response?conversation_id=${v}`), 'conversation_id');
    }
  });
});

describe('methods', () => {
  it('answers POST, PUT, PATCH, DELETE and OPTIONS with 405 and an Allow header, before looking at credentials', async () => {
    const { acct, paths } = await accountWithRecord();
    const all = [...paths, `${V2}/openapi.json`];
    for (const path of all) {
      // OPTIONS on the public document is a CORS preflight (tests/api/openapi.test.ts).
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => !(m === 'OPTIONS' && path.endsWith('/openapi.json')))) {
        for (const key of [acct.key, undefined, 'svc_live_bad']) {
          const res = await api(server.url, key)(path, {
            method,
            headers: { 'content-type': 'application/json' },
            body: ['DELETE', 'OPTIONS'].includes(method) ? undefined : '{}',
          });
          assertProblem(res, 405);
          const allow = (res.headers.get('allow') ?? '').split(',').map((s) => s.trim().toUpperCase());
          assert.ok(allow.includes('GET') && allow.includes('HEAD'), `${method} ${path}: Allow ${res.headers.get('allow')}`);
          assert.ok(!allow.includes(method), `${method} ${path}`);
        }
      }
    }
  });

  it('answers HEAD like GET, without a body', async () => {
    const { get, paths } = await accountWithRecord();
    for (const path of paths) {
      const g = await get(path);
      const h = await get(path, { method: 'HEAD' });
      assert.equal(h.status, 200, path);
      assert.equal(h.body, null, path);
      assert.equal(h.headers.get('content-type'), g.headers.get('content-type'), path);
    }
    const unknown = await get(`${V2}/response/${randomUUID()}`, { method: 'HEAD' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body, null);
    const bad = await get(`${V2}/response?page=0`, { method: 'HEAD' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body, null);
    const noKey = await api(server.url)(`${V2}/conversation`, { method: 'HEAD' });
    assert.equal(noKey.status, 401);
    assert.match(noKey.headers.get('www-authenticate') ?? '', /^Bearer\b/);
    assert.equal(noKey.body, null);
  });
});

describe('problem details', () => {
  it('every error is application/problem+json with type, title, status and detail', async () => {
    const { get } = await accountWithRecord();
    const cases: Array<{ res: Promise<Awaited<ReturnType<typeof get>>>; status: number }> = [
      { res: get(`${V2}/response?page=abc`), status: 400 },
      { res: api(server.url)(`${V2}/response`), status: 401 },
      { res: get(`${V2}/conversation/${randomUUID()}`), status: 404 },
      { res: get(`${V2}/conversation`, { method: 'DELETE' }), status: 405 },
    ];
    for (const c of cases) assertProblem(await c.res, c.status);
  });
});

describe('OpenAPI document', () => {
  it('is public and describes the eight operations in OpenAPI 3.1', async () => {
    for (const key of [undefined, 'svc_live_not_a_key']) {
      const res = await api(server.url, key)(`${V2}/openapi.json`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /json/);
      assert.match(res.body.openapi, /^3\.1\./);
      const paths = Object.keys(res.body.paths)
        .map((p) => p.replace(/^\/customer-api\/v2/, ''))
        .sort();
      assert.deepEqual(paths, [
        '/attachments/{attachment_id}',
        '/conversation',
        '/conversation/export',
        '/conversation/{conversation_id}',
        '/insights',
        '/response',
        '/response/export',
        '/response/{response_id}',
      ]);
      for (const p of Object.values(res.body.paths) as Array<Record<string, unknown>>) assert.deepEqual(Object.keys(p), ['get']);
      const listParams = (res.body.paths[Object.keys(res.body.paths).find((p) => p.endsWith('/response'))!].get.parameters as Array<{ name: string }>).map(
        (p) => p.name,
      );
      for (const name of ['page', 'resultsPerPage', 'order_by', 'sort', 'channel_id', 'channel_ids[]', 'conversation_id', 'query', 'updated_since', 'format']) {
        assert.ok(listParams.includes(name), `GET /response documents ${name}`);
      }
    }
    const head = await api(server.url)(`${V2}/openapi.json`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, null);
  });
});
