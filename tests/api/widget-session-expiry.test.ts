// One database: PostgreSQL — the token's lifetime and the socket's end
/**
 * Token lifetime (own server with WIDGET_TOKEN_TTL_SECONDS=2): expires_in follows the override, a
 * connected socket is told and closed when its token expires, and the expired token is refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { assertProblem } from '../helpers/api-fixtures';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectVisitor, createTestWidgetClient, expectRefused, tokenRequest, TRANSPORTS, upload } from '../helpers/widget';
import { tinyPng } from '../fixtures/widget-files';

const TTL = 2;
const ORIGIN = 'https://example.com';
let server: TestServer;
before(
  async () => {
    server = await startTestServer({ WIDGET_TOKEN_TTL_SECONDS: String(TTL), TOKEN_RATE_PER_IP_PER_MINUTE: '100000' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

describe('widget token lifetime', () => {
  it('reports the configured lifetime in expires_in, in both modes', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const backend = await backendToken(server.url, client);
    assert.equal(backend.expires_in, TTL);
    const claims = decodeJwt(backend.access_token);
    assert.equal(claims.exp! - claims.iat!, TTL);
    const browser = await tokenRequest(server.url, { client_id: client.client_id }, { origin: ORIGIN });
    assert.equal(browser.status, 200);
    assert.equal(browser.body.expires_in, TTL);
  });

  it('closes a connected socket with session:expired when its token expires, then refuses the token', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const { access_token: token } = await backendToken(server.url, client);
    const visitors = await Promise.all(TRANSPORTS.map((tr) => connectVisitor(server.url, token, ORIGIN, tr)));
    try {
      const exp = decodeJwt(token).exp!;
      for (const v of visitors) assert.equal(v.session!.token_expires_at, exp);
      await Promise.all(visitors.map((v) => v.until(() => v.disconnectReason !== undefined, 'the server to close the socket', (TTL + 3) * 1000)));
      const closedAt = Date.now();
      assert.ok(closedAt >= exp * 1000 - 50, `not closed before expiry (${closedAt - exp * 1000} ms)`);
      assert.ok(closedAt <= exp * 1000 + 3000, `closed soon after expiry (${closedAt - exp * 1000} ms)`);
      for (const v of visitors) {
        assert.ok(v.expired, 'session:expired was sent first');
        assert.match(v.expired!.message, /expired/);
        assert.equal(v.expired!.code, 'token_expired');
        assert.equal(v.disconnectReason, 'io server disconnect');
        assert.equal(v.socket.connected, false);
      }
    } finally {
      for (const v of visitors) v.close();
    }

    for (const transport of TRANSPORTS) {
      assert.match(await expectRefused(server.url, { transport, auth: { token }, origin: ORIGIN }), /expired/);
    }
    const up = await upload(server.url, token, [{ name: 'pixel.png', data: tinyPng() }]);
    assertProblem(up, 401);
    assert.match(up.body.detail, /expired/);

    // A fresh token for the same visitor works again.
    const fresh = await backendToken(server.url, client, decodeJwt(token).sub);
    const again = await connectVisitor(server.url, fresh.access_token, ORIGIN);
    assert.equal(again.session!.visitor_id, decodeJwt(token).sub);
    again.close();
  });
});
