import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setClientDomains } from '../../lib/widget-clients/service';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectOutcome, createTestWidgetClient, expectRefused, widgetSocket } from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    server = await startTestServer();
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

describe('widget domains are checked live', () => {
  it('a domain removed from the client stops new connections with tokens issued before', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example.com', 'blog.example.com']);
    const issued = await backendToken(server.url, client);
    const ok = widgetSocket(server.url, { origin: 'https://blog.example.com', auth: { token: issued.access_token } });
    assert.deepEqual(await connectOutcome(ok), { connected: true });
    ok.close();
    await setClientDomains(CLI, acct.accountId, client.client_id, ['shop.example.com']);
    const message = await expectRefused(server.url, { origin: 'https://blog.example.com', auth: { token: issued.access_token } });
    assert.match(message, /^domain not allowed: .*no longer registered/);
    const still = widgetSocket(server.url, { origin: 'https://shop.example.com', auth: { token: issued.access_token } });
    assert.deepEqual(await connectOutcome(still), { connected: true });
    still.close();
  });
});
