/** Customer API v2 authentication: the 401 table, revocation, environments, last_used_at. */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApiKey, revokeApiKey } from '../../lib/accounts/service';
import { getDb } from '../../db/client';
import { listApiKeys, revokeApiKey as revokeApiKeyRow } from '../../db/queries/api-keys';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { assertEnvelope, assertUnauthorized, V2 } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

const FLUSH_MS = 200;
let server: TestServer;
before(async () => {
  server = await startTestServer({ API_KEY_USAGE_FLUSH_MS: String(FLUSH_MS) });
});
after(async () => {
  await server?.close();
});

const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const base62 = (n: number) => Array.from({ length: n }, (_, i) => B62[(i * 17 + 5) % 62]).join('');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    paths: [`${V2}/response`, `${V2}/response/${r.response_id}`, `${V2}/conversation`, `${V2}/conversation/${conv.conversation_id}`],
  };
}

/** Splits svc_<env>_<key id>_<secret>. */
function partsOf(key: string) {
  const m = /^svc_(live|test)_([0-9A-Za-z]+)_([0-9A-Za-z]+)$/.exec(key);
  assert.ok(m, `key has the contract's form: ${key}`);
  return { env: m[1]!, keyId: m[2]!, secret: m[3]! };
}

async function lastUsedAt(accountId: number, keyId: string): Promise<Date | null> {
  const keys = await listApiKeys(await getDb(), accountId);
  const k = keys.find((x) => x.keyId === keyId);
  assert.ok(k, `key ${keyId} exists`);
  return k.lastUsedAt ? new Date(k.lastUsedAt) : null;
}

describe('401 Unauthorized', () => {
  it('refuses every missing or bad credential on every operation, with WWW-Authenticate: Bearer', async () => {
    const { acct, paths } = await accountWithRecord();
    const { keyId, secret } = partsOf(acct.key);
    const other = await createTestAccount();
    const otherParts = partsOf(other.key);
    const cases: Array<{ name: string; authorization?: string; query?: string }> = [
      { name: 'no Authorization header' },
      { name: 'empty header', authorization: '' },
      { name: 'Basic scheme', authorization: `Basic ${Buffer.from(`user:${acct.key}`).toString('base64')}` },
      { name: 'key without scheme', authorization: acct.key },
      { name: 'Token scheme', authorization: `Token ${acct.key}` },
      { name: 'Bearer without token', authorization: 'Bearer' },
      { name: 'Bearer with blank token', authorization: 'Bearer   ' },
      { name: 'two tokens', authorization: `Bearer ${acct.key} ${acct.key}` },
      { name: 'malformed key', authorization: 'Bearer not-a-key' },
      { name: 'unknown environment', authorization: `Bearer svc_prod_${keyId}_${secret}` },
      { name: 'no prefix', authorization: `Bearer ${keyId}_${secret}` },
      { name: 'short secret', authorization: `Bearer svc_live_${keyId}_${secret.slice(0, 8)}` },
      { name: 'secret with a bad character', authorization: `Bearer svc_live_${keyId}_${secret.slice(0, -1)}_` },
      { name: 'unknown key id', authorization: `Bearer svc_live_${base62(16)}_${secret}` },
      { name: 'right key id, wrong secret', authorization: `Bearer svc_live_${keyId}_${base62(32)}` },
      { name: 'right key id, secret one character off', authorization: `Bearer svc_live_${keyId}_${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}` },
      { name: 'right key id, secret with extra characters', authorization: `Bearer svc_live_${keyId}_${secret}00` },
      { name: 'key id of one account, secret of another', authorization: `Bearer svc_live_${keyId}_${otherParts.secret}` },
      { name: 'live key written as test', authorization: `Bearer svc_test_${keyId}_${secret}` },
      { name: 'key in the query string only', query: `api_key=${encodeURIComponent(acct.key)}` },
      { name: 'key as access_token in the query string', query: `access_token=${encodeURIComponent(acct.key)}` },
      { name: 'key as key in the query string', query: `key=${encodeURIComponent(acct.key)}&apiKey=${encodeURIComponent(acct.key)}` },
    ];
    for (const c of cases) {
      for (const path of paths) {
        const headers: Record<string, string> = {};
        if (c.authorization !== undefined) headers.authorization = c.authorization;
        const res = await api(server.url)(`${path}${c.query ? `?${c.query}` : ''}`, { headers });
        assertUnauthorized(res);
        assert.ok(!JSON.stringify(res.body).includes(secret), `${c.name}: the body must not echo the secret`);
      }
    }
  });

  it('accepts the same key with the scheme in any case and surrounding spaces', async () => {
    const { acct } = await accountWithRecord();
    for (const authorization of [`Bearer ${acct.key}`, `bearer ${acct.key}`, `BEARER ${acct.key}`, `Bearer  ${acct.key} `]) {
      const res = await api(server.url)(`${V2}/response`, { headers: { authorization } });
      assert.equal(assertEnvelope(res).count, 1, JSON.stringify(authorization));
    }
  });

  it("refuses a revoked key at once, while the account's other keys keep working", async () => {
    const { acct, paths } = await accountWithRecord();
    const second = await createApiKey(CLI, { accountId: acct.accountId, name: 'second' });
    const get = api(server.url, acct.key);
    for (const path of paths) assert.equal((await get(path)).status, 200, path);
    await revokeApiKey(CLI, null, acct.keyId);
    for (const path of paths) assertUnauthorized(await get(path));
    for (const path of paths) assert.equal((await api(server.url, second.key)(path)).status, 200, path);
    // Revoking again changes nothing.
    await revokeApiKey(CLI, null, acct.keyId);
    assertUnauthorized(await get(`${V2}/response`));
  });

  it('never serves a key revoked without an invalidation message for more than a second (the cache bound)', async () => {
    const { API_KEY_CACHE_MS } = await import('../../lib/auth/customer-api'); // after Next's runtime is up
    assert.ok(API_KEY_CACHE_MS <= 1000);
    const { acct } = await accountWithRecord();
    const get = api(server.url, acct.key);
    assert.equal((await get(`${V2}/response`)).status, 200); // read and kept for at most API_KEY_CACHE_MS
    const read = Date.now();
    // Revoke the row only, as a lost message (Redis away) would leave it: no instance is told.
    await revokeApiKeyRow(await getDb(), null, acct.keyId);
    const early = await get(`${V2}/response`);
    if (Date.now() - read < API_KEY_CACHE_MS / 2) assert.equal(early.status, 200, 'served from the process cache within the bound');
    await sleep(Math.max(0, read + API_KEY_CACHE_MS + 50 - Date.now()));
    for (let i = 0; i < 5; i++) assertUnauthorized(await get(`${V2}/response`));
  });

  it('refuses a test-environment key on the live deployment, saying so', async () => {
    const { acct, paths } = await accountWithRecord();
    const testKey = await createApiKey(CLI, { accountId: acct.accountId, env: 'test' });
    assert.equal(partsOf(testKey.key).env, 'test');
    for (const path of paths) {
      const res = await api(server.url, testKey.key)(path);
      assertUnauthorized(res);
      assert.match(res.body.detail, /\btest\b/i, res.body.detail);
      assert.match(res.body.detail, /\blive\b|environment/i, res.body.detail);
    }
    const liveKey = await createApiKey(CLI, { accountId: acct.accountId, env: 'live' });
    assert.equal((await api(server.url, liveKey.key)(`${V2}/response`)).status, 200);
  });
});

describe('last_used_at', () => {
  it('is recorded after a request, once the usage flush has run', async () => {
    const { acct } = await accountWithRecord();
    const unused = await createApiKey(CLI, { accountId: acct.accountId, name: 'never used' });
    const revoked = await createApiKey(CLI, { accountId: acct.accountId, name: 'revoked' });
    await revokeApiKey(CLI, null, revoked.key_id);
    assert.equal(await lastUsedAt(acct.accountId, acct.keyId), null);

    const started = Date.now();
    assert.equal((await api(server.url, acct.key)(`${V2}/conversation`)).status, 200);
    // Failed attempts with the other keys' ids must not count as uses.
    assertUnauthorized(await api(server.url, revoked.key)(`${V2}/conversation`));
    assertUnauthorized(
      await api(server.url)(`${V2}/conversation`, {
        headers: { authorization: `Bearer svc_live_${unused.key_id}_${base62(32)}` },
      }),
    );

    let used: Date | null = null;
    for (let waited = 0; waited < 20 * FLUSH_MS && !used; waited += 50) {
      await sleep(50);
      used = await lastUsedAt(acct.accountId, acct.keyId);
    }
    assert.ok(used, `last_used_at set within ${20 * FLUSH_MS} ms`);
    assert.ok(used.getTime() >= started - 2000 && used.getTime() <= Date.now() + 2000, `plausible time: ${used.toISOString()}`);
    await sleep(3 * FLUSH_MS);
    assert.equal(await lastUsedAt(acct.accountId, unused.key_id), null, 'a wrong secret is not a use');
    assert.equal(await lastUsedAt(acct.accountId, revoked.key_id), null, 'a revoked key is not a use');

    // A later request moves it forward.
    await sleep(1100);
    assert.equal((await api(server.url, acct.key)(`${V2}/response`)).status, 200);
    let later: Date | null = used;
    for (let waited = 0; waited < 20 * FLUSH_MS && later!.getTime() <= used.getTime(); waited += 50) {
      await sleep(50);
      later = await lastUsedAt(acct.accountId, acct.keyId);
    }
    assert.ok(later!.getTime() > used.getTime(), 'last_used_at moves forward');
  });
});
