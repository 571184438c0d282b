/**
 * "Send test event" (docs/contracts.md §11): a `webhook.test` event to one endpoint only, through
 * the outbox, signed like every delivery and listed in its delivery log; held while paused; tenancy
 * and bad ids refused precisely.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { bodyOf, WebhookReceiver } from '../helpers/webhook-receiver';
import { eventually } from '../helpers/widget';
import { createWebhookEndpoint, listWebhookDeliveries, sendWebhookTestEvent, setWebhookPaused } from '../../lib/webhooks/service';
import { isAppError } from '../../lib/core/errors';
import { getDb } from '../../db/client';
import { getSetting } from '../../db/queries/settings';

let server: TestServer;
const receivers: WebhookReceiver[] = [];
before(
  async () => {
    server = await startTestServer({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1', WEBHOOK_RETRY_BASE_MS: '0.1' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await Promise.all(receivers.map((r) => r.stop().catch(() => {})));
    await server?.close();
  },
  { timeout: 30_000 },
);

async function receiver() {
  const r = await new WebhookReceiver().start();
  receivers.push(r);
  return r;
}

describe('the running server records its address (seed --demo prints it)', () => {
  it('is the address the server listens on', async () => {
    assert.equal(await getSetting(await getDb(), 'server_url'), server.url);
  });
});

describe('webhooks: Send test event', () => {
  it('delivers one signed webhook.test event to that endpoint only, and logs it', async () => {
    const acct = await createTestAccount();
    const rx = await receiver();
    const other = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url, events: ['response.created'] });
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: other.url });

    const sent = await sendWebhookTestEvent(acct.accountId, ep.endpoint_id);
    assert.deepEqual(Object.keys(sent), ['endpoint_id', 'event_id', 'queued']);
    assert.match(sent.event_id, /^msg_[0-9a-f]{32}$/);
    const [got] = await rx.until((r) => r.length >= 1, 'the test event');
    const h = got!.headers as Record<string, string>;
    assert.equal(h['webhook-id'], sent.event_id);
    assert.deepEqual(new Webhook(ep.secret).verify(got!.body, h), JSON.parse(got!.body), 'signed with the endpoint secret');
    const body = bodyOf(got!);
    assert.equal(body.type, 'webhook.test');
    assert.deepEqual(body.data, { endpoint_id: ep.endpoint_id, test: true });

    const log = await eventually(
      () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
      (l) => l[0]?.status === 'delivered',
      'the test delivery logged as delivered',
    );
    assert.equal(log.length, 1);
    assert.equal(log[0]!.type, 'webhook.test');
    assert.equal(other.received.length, 0, 'no other endpoint receives it');
  });

  it('is held while the endpoint is paused and sent on resume', async () => {
    const acct = await createTestAccount();
    const rx = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url });
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, true);
    await sendWebhookTestEvent(acct.accountId, ep.endpoint_id);
    const [held] = await listWebhookDeliveries(acct.accountId, ep.endpoint_id);
    assert.equal(held!.status, 'held');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(rx.received.length, 0, 'nothing sent while paused');
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, false);
    await rx.until((r) => r.length >= 1, 'sent after resume');
  });

  const cases: Array<{ name: string; account: 'own' | 'other'; id: () => unknown; code: string; message: RegExp }> = [
    { name: 'not a uuid', account: 'own', id: () => 'nope', code: 'invalid_request', message: /endpoint-id/ },
    { name: 'not a string', account: 'own', id: () => 42, code: 'invalid_request', message: /endpoint-id/ },
    { name: 'no such endpoint', account: 'own', id: () => randomUUID(), code: 'not_found', message: /No webhook endpoint with id/ },
    { name: "another account's endpoint", account: 'other', id: () => shared, code: 'not_found', message: /No webhook endpoint with id/ },
  ];
  let shared: string;
  for (const c of cases) {
    it(`refuses: ${c.name}`, async () => {
      const owner = await createTestAccount();
      const rx = await receiver();
      shared = (await createWebhookEndpoint(CLI, { accountId: owner.accountId, url: rx.url })).endpoint_id;
      const caller = c.account === 'own' ? owner : await createTestAccount();
      await assert.rejects(sendWebhookTestEvent(caller.accountId, c.id()), (e) => {
        assert.ok(isAppError(e));
        assert.equal(e.code, c.code);
        assert.match(e.message, c.message);
        return true;
      });
      assert.equal((await listWebhookDeliveries(owner.accountId, shared)).length, 0, 'nothing queued');
    });
  }
});
