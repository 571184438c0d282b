/**
 * Refused widget connections (issue 8, item 12; issue 23, item 5): token-endpoint and
 * socket-handshake refusals are counted per client, origin, stage and reason, shown to the
 * client's account only, and stored as aggregate rows whose number per client is bounded. A
 * refusal counts against a client only when its token's signature verified or the Origin is one
 * of the client's registered domains; recording is rate-limited per address, and one client's
 * flood never pushes out another client's refusals.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { LISTED_PER_CLIENT, ORIGINS_PER_CLIENT, OTHER_ORIGINS } from '../../db/queries/refusals';
import { signWidgetToken, TOKEN_AUDIENCE, TOKEN_ISSUER, TOKEN_TYPE } from '../../lib/auth/widget-tokens';
import { flushRefusals, noteRefusal, recentRefusals, REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE } from '../../lib/widget-clients/refusals';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, createTestWidgetClient, eventually, expectRefused, tokenRequest } from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    // TRUST_PROXY: the flood test speaks from addresses of its own through X-Forwarded-For.
    server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000', TRUST_PROXY: 'loopback' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

const storedRows = async (clientId: string) =>
  (await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM widget_refusals WHERE client_id = ${clientId}`))[0]!.n;
const storedCount = async (clientId: string) =>
  (await rows<{ n: number }>(await getDb(), sql`SELECT coalesce(sum(count), 0)::int AS n FROM widget_refusals WHERE client_id = ${clientId}`))[0]!.n;
const view = (list: Awaited<ReturnType<typeof recentRefusals>>) => list.map((r) => [r.origin, r.stage, r.reason, r.count]).sort();
/** Refusals are counted just after the refusal went out (a limiter round trip, maybe a lookup): wait for the expected list. */
async function expectListed(accountId: number, want: unknown[][]) {
  const got = await eventually(
    async () => view(await recentRefusals(accountId)),
    (v) => JSON.stringify(v) === JSON.stringify(want),
    'the refusals counted',
    3000,
  ).catch(async () => view(await recentRefusals(accountId)));
  assert.deepEqual(got, want);
}
const settledCount = (clientId: string, want: number) =>
  eventually(
    async () => {
      await flushRefusals();
      return storedCount(clientId);
    },
    (n) => n === want,
    'the refusals counted',
    3000,
  ).catch(() => storedCount(clientId));

describe('refused token requests', () => {
  it("are counted only when the Origin is one of the client's registered domains (anyone can name a client id)", async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    for (let i = 0; i < 3; i++) {
      const r = await tokenRequest(server.url, { client_id: client.client_id }, { origin: 'https://evil.example' });
      assert.equal(r.status, 403);
    }
    assert.equal((await tokenRequest(server.url, { client_id: client.client_id, client_secret: 'wcs_wrong' })).status, 401);
    assert.equal((await tokenRequest(server.url, { client_id: client.client_id })).status, 403);
    assert.equal((await tokenRequest(server.url, { client_id: client.client_id, client_secret: 'wcs_wrong' }, { origin: 'https://shop.example' })).status, 401);
    assert.equal((await tokenRequest(server.url, { client_id: client.client_id }, { origin: 'https://shop.example' })).status, 200);
    await expectListed(acct.accountId, [['https://shop.example', 'token', 'wrong client secret', 1]]);
    const list = await recentRefusals(acct.accountId);
    assert.equal(list[0]!.client_id, client.client_id);
    assert.equal(list[0]!.client_name, 'shop.example');
    assert.match(list[0]!.last_seen, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });
});

describe('refused socket handshakes', () => {
  it('counts a connection from an unregistered origin and an expired token under the client the token names', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const token = await backendToken(server.url, client);
    assert.match(await expectRefused(server.url, { origin: 'https://other.example', auth: { token: token.access_token } }), /domain not allowed/);
    assert.match(
      await expectRefused(server.url, { origin: 'https://other.example', auth: { token: token.access_token }, transport: 'polling' }),
      /domain not allowed/,
    );
    const expired = await signWidgetToken(
      {
        accountId: acct.accountId,
        clientId: client.client_id,
        channelId: client.channel_id,
        domains: client.domains,
        visitorId: 'v_abcdefghijklmnopqrst',
        visitorBound: false,
      },
      1,
    );
    await new Promise((r) => setTimeout(r, 2100));
    assert.match(await expectRefused(server.url, { origin: 'https://shop.example', auth: { token: expired.token } }), /token expired/);
    await expectListed(acct.accountId, [
      ['https://other.example', 'socket', 'domain not allowed', 2],
      ['https://shop.example', 'socket', 'token expired', 1],
    ]);
  });

  it("a forged token counts against the client it names only from that client's registered origin; never for a client that does not exist", async () => {
    const owner = await createTestAccount();
    const other = await createTestAccount();
    const client = await createTestWidgetClient(owner.accountId, ['shop.example']);
    const token = await backendToken(server.url, client);
    await expectRefused(server.url, { origin: 'https://nope.example', auth: { token: token.access_token } });
    const unsigned = (cid: string) => `e30.${Buffer.from(JSON.stringify({ cid })).toString('base64url')}.x`;
    // Signed with a key of the attacker's own, every claim right but the signature.
    const wrongKey = await new SignJWT({ typ: TOKEN_TYPE, acc: owner.accountId, cid: client.client_id, ch: client.channel_id, dom: ['forged.example'] })
      .setProtectedHeader({ alg: 'HS256', kid: 'k-attacker' })
      .setIssuer(TOKEN_ISSUER)
      .setAudience(TOKEN_AUDIENCE)
      .setSubject('v_abcdefghijklmnopqrst')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('x'.repeat(32)));
    for (const forged of [unsigned(client.client_id), wrongKey]) {
      for (const origin of ['https://forged.example', 'https://phishing-text.example', '']) {
        assert.match(await expectRefused(server.url, { origin: origin || null, auth: { token: forged } }), /token invalid/);
      }
    }
    await expectRefused(server.url, { origin: 'https://nope.example', auth: { token: unsigned('wc_doesnotexist0000') } });
    await expectListed(owner.accountId, [['https://nope.example', 'socket', 'domain not allowed', 1]]); // only the genuine token's
    // From a registered domain the attempt is the client's own page failing: counted.
    await expectRefused(server.url, { origin: 'https://shop.example', auth: { token: unsigned(client.client_id) } });
    await expectListed(owner.accountId, [
      ['https://nope.example', 'socket', 'domain not allowed', 1],
      ['https://shop.example', 'socket', 'token invalid', 1],
    ]);
    assert.deepEqual(await recentRefusals(other.accountId), []);
    assert.equal(await storedRows('wc_doesnotexist0000'), 0);
  });

  it(`a flood from one address is recorded up to ${REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE} a minute; another address still is`, {
    timeout: 60_000,
  }, async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const token = (await backendToken(server.url, client)).access_token;
    const attempt = (ip: string) => expectRefused(server.url, { origin: 'https://flood.example', auth: { token }, headers: { 'x-forwarded-for': ip } });
    const flood = REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE + 20;
    for (let i = 0; i < flood; i += 10) await Promise.all(Array.from({ length: Math.min(10, flood - i) }, () => attempt('198.51.100.7')));
    await expectListed(acct.accountId, [['https://flood.example', 'socket', 'domain not allowed', REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE]]);
    await attempt('198.51.100.8');
    await attempt('2001:db8:1:2::1');
    await attempt('2001:db8:1:2::2');
    assert.equal(await settledCount(client.client_id, REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE + 3), REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE + 3);
  });
});

describe('bounded storage', () => {
  const many = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`; // one address per attempt: past the address limit

  it('aggregates repeated attempts into one row and folds origins beyond the per-client cap', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const note = (i: number, origin: string, stage: 'token' | 'socket', detail: string) =>
      noteRefusal({ clientId: client.client_id, verified: true, address: many(i), origin, stage, reason: 'domain not allowed', detail });
    await Promise.all(Array.from({ length: 2000 }, (_, i) => note(i, 'https://flood.example', 'token', 'x')));
    await flushRefusals();
    await Promise.all(Array.from({ length: 2000 }, (_, i) => note(2000 + i, 'https://flood.example', 'token', 'x')));
    await flushRefusals();
    assert.equal(await storedRows(client.client_id), 1);
    assert.equal((await recentRefusals(acct.accountId))[0]!.count, 4000);

    const extra = 30;
    for (let i = 0; i < ORIGINS_PER_CLIENT + extra; i++) {
      await note(10_000 + i, `https://o${i}.example`, 'socket', 'y');
      if (i % 20 === 19) await flushRefusals();
    }
    await flushRefusals();
    const stored = await storedRows(client.client_id);
    assert.ok(stored <= ORIGINS_PER_CLIENT + 20 + 1, `rows kept: ${stored}`);
    assert.equal(await storedCount(client.client_id), 4000 + ORIGINS_PER_CLIENT + extra, 'every attempt is counted');
    const folded = (await recentRefusals(acct.accountId)).find((r) => r.origin === OTHER_ORIGINS);
    assert.ok(folded && folded.count >= extra - 20, JSON.stringify(folded));
  });

  it("client A's flood pushes out none of client B's refusals, pending or listed", { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    const a = await createTestWidgetClient(acct.accountId, ['a.example']);
    const b = await createTestWidgetClient(acct.accountId, ['b.example']);
    const noteB = (origin: string) =>
      noteRefusal({
        clientId: b.client_id,
        verified: true,
        address: '192.0.2.20',
        origin,
        stage: 'socket',
        reason: 'token expired',
        detail: 'token expired: request a new one',
      });
    await noteB('https://b.example');
    await flushRefusals();
    // 3,000 distinct rows from A in one flush window (more than any global cap would hold), then B.
    const reasons = ['domain not allowed', 'token invalid'] as const;
    await Promise.all(
      Array.from({ length: 3000 }, (_, i) =>
        noteRefusal({
          clientId: a.client_id,
          verified: true,
          address: many(100_000 + i),
          origin: `https://a${i}.example`,
          stage: i % 2 ? 'socket' : 'token',
          reason: reasons[(i >> 1) % 2]!,
          detail: 'flood',
        }),
      ),
    );
    await noteB('https://www.b.example');
    await flushRefusals();
    assert.equal(await storedCount(a.client_id), 3000, "A's attempts are all counted");
    assert.ok((await storedRows(a.client_id)) <= ORIGINS_PER_CLIENT + 4, `A's rows stay bounded: ${await storedRows(a.client_id)}`);
    const list = await recentRefusals(acct.accountId);
    assert.equal(list.filter((r) => r.client_id === a.client_id).length, LISTED_PER_CLIENT, 'A is listed up to its share');
    assert.deepEqual(
      list
        .filter((r) => r.client_id === b.client_id)
        .map((r) => [r.origin, r.count])
        .sort(),
      [
        ['https://b.example', 1],
        ['https://www.b.example', 1],
      ],
      "B's refusals, the older one too, with their origins",
    );
  });

  it('an origin header of any length is stored clipped', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example']);
    const token = (await backendToken(server.url, client)).access_token;
    assert.match(await expectRefused(server.url, { origin: `https://${'a'.repeat(5000)}.example`, auth: { token } }), /domain not allowed/);
    const [row] = await eventually(
      () => recentRefusals(acct.accountId),
      (l) => l.length === 1,
      'the refusal counted',
    );
    assert.ok(row!.origin.length <= 200 && row!.detail.length <= 300, `${row!.origin.length} ${row!.detail.length}`);
  });
});
