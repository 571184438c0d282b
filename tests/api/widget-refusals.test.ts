/**
 * Refused widget connections (issue 8, item 12): token-endpoint and socket-handshake refusals are
 * counted per client, origin, stage and reason, shown to the client's account only, and stored
 * as aggregate rows whose number per client is bounded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { ORIGINS_PER_CLIENT, OTHER_ORIGINS } from '../../db/queries/refusals';
import { signWidgetToken } from '../../lib/auth/widget-tokens';
import { flushRefusals, noteRefusal, recentRefusals } from '../../lib/widget-clients/refusals';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, createTestWidgetClient, expectRefused, tokenRequest } from '../helpers/widget';

let server: TestServer;
before(async () => {
  server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000' });
}, { timeout: 120_000 });
after(async () => { await server?.close(); }, { timeout: 30_000 });

const storedRows = async (clientId: string) => (await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM widget_refusals WHERE client_id = ${clientId}`))[0]!.n;

describe('refused token requests', () => {
  it('counts client-id requests from an unregistered origin, wrong secrets and missing Origin, per reason', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    for (let i = 0; i < 3; i++) {
      const r = await tokenRequest(server.url, { client_id: client.client_id }, { origin: 'https://evil.example' });
      assert.equal(r.status, 403);
    }
    assert.equal((await tokenRequest(server.url, { client_id: client.client_id, client_secret: 'wcs_wrong' })).status, 401);
    assert.equal((await tokenRequest(server.url, { client_id: client.client_id })).status, 403);
    assert.equal((await tokenRequest(server.url, { client_id: client.client_id }, { origin: 'https://shop.example' })).status, 200);
    const list = await recentRefusals(acct.accountId);
    const view = list.map((r) => [r.origin, r.stage, r.reason, r.count]).sort();
    assert.deepEqual(view, [['', 'token', 'no Origin header', 1], ['', 'token', 'wrong client secret', 1], ['https://evil.example', 'token', 'domain not allowed', 3]]);
    const evil = list.find((r) => r.origin === 'https://evil.example')!;
    assert.equal(evil.client_id, client.client_id);
    assert.equal(evil.client_name, 'shop.example');
    assert.match(evil.detail, /Origin https:\/\/evil\.example is not a registered domain/);
    assert.match(evil.last_seen, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });
});

describe('refused socket handshakes', () => {
  it('counts a connection from an unregistered origin and an expired token under the client the token names', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const token = await backendToken(server.url, client);
    assert.match(await expectRefused(server.url, { origin: 'https://other.example', auth: { token: token.access_token } }), /domain not allowed/);
    assert.match(await expectRefused(server.url, { origin: 'https://other.example', auth: { token: token.access_token }, transport: 'polling' }), /domain not allowed/);
    const expired = await signWidgetToken({ accountId: acct.accountId, clientId: client.client_id, channelId: client.channel_id, domains: client.domains, visitorId: 'v_abcdefghijklmnopqrst', visitorBound: false }, 1);
    await new Promise((r) => setTimeout(r, 2100));
    assert.match(await expectRefused(server.url, { origin: 'https://shop.example', auth: { token: expired.token } }), /token expired/);
    const list = await recentRefusals(acct.accountId);
    const view = list.map((r) => [r.origin, r.stage, r.reason, r.count]).sort();
    assert.deepEqual(view, [['https://other.example', 'socket', 'domain not allowed', 2], ['https://shop.example', 'socket', 'token expired', 1]]);
  });

  it('shows refusals to the client\'s account only; a token naming no client is not recorded', async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const client = await createTestWidgetClient(owner.accountId, ['shop.example']);
    const token = await backendToken(server.url, client);
    await expectRefused(server.url, { origin: 'https://nope.example', auth: { token: token.access_token } });
    const forged = `e30.${Buffer.from(JSON.stringify({ cid: 'wc_doesnotexist0000' })).toString('base64url')}.x`;
    await expectRefused(server.url, { origin: 'https://nope.example', auth: { token: forged } });
    assert.equal((await recentRefusals(owner.accountId)).length, 1);
    assert.deepEqual(await recentRefusals(other.accountId), []);
    assert.equal(await storedRows('wc_doesnotexist0000'), 0);
  });
});

describe('bounded storage', () => {
  it('aggregates repeated attempts into one row and folds origins beyond the per-client cap', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    for (let i = 0; i < 2000; i++) noteRefusal({ clientId: client.client_id, origin: 'https://flood.example', stage: 'token', reason: 'domain not allowed', detail: 'x' });
    await flushRefusals();
    for (let i = 0; i < 2000; i++) noteRefusal({ clientId: client.client_id, origin: 'https://flood.example', stage: 'token', reason: 'domain not allowed', detail: 'x' });
    await flushRefusals();
    assert.equal(await storedRows(client.client_id), 1);
    assert.equal((await recentRefusals(acct.accountId))[0]!.count, 4000);

    const extra = 30;
    for (let i = 0; i < ORIGINS_PER_CLIENT + extra; i++) {
      noteRefusal({ clientId: client.client_id, origin: `https://o${i}.example`, stage: 'socket', reason: 'domain not allowed', detail: 'y' });
      if (i % 20 === 19) await flushRefusals();
    }
    await flushRefusals();
    const stored = await storedRows(client.client_id);
    assert.ok(stored <= ORIGINS_PER_CLIENT + 20 + 1, `rows kept: ${stored}`);
    const list = await recentRefusals(acct.accountId);
    assert.equal(list.reduce((n, r) => n + (r.stage === 'socket' ? r.count : 0), 0), ORIGINS_PER_CLIENT + extra, 'every attempt is counted');
    const folded = list.find((r) => r.origin === OTHER_ORIGINS);
    assert.ok(folded && folded.count >= extra - 20, JSON.stringify(folded));
  });

  it('an origin header of any length is stored clipped', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const r = await tokenRequest(server.url, { client_id: client.client_id }, { origin: `https://${'a'.repeat(5000)}.example` });
    assert.equal(r.status, 403);
    const [row] = await recentRefusals(acct.accountId);
    assert.ok(row!.origin.length <= 200 && row!.detail.length <= 300, `${row!.origin.length} ${row!.detail.length}`);
  });
});
