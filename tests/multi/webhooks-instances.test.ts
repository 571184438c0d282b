/**
 * Webhook delivery across real server processes (docs/contracts.md §11) on a private PostgreSQL: two
 * instances never deliver one event twice; an instance killed (SIGKILL) while its receiver is
 * down delivers after the restart; with two accounts and retries, each conversation still arrives
 * in order; a PostgreSQL outage does not crash the worker, which delivers
 * once the database is back. Events are written to the outbox by this process, as the change's
 * transaction does. Every wait is bounded.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, PrivatePostgres, startInstances, type Cluster, type Instance } from '../helpers/instances';
import { sleep } from '../helpers/widget';
import { bodyOf, WebhookReceiver } from '../helpers/webhook-receiver';

const enabled = process.env.TEST_DB === 'postgres';

describe('webhooks across instances', { skip: !enabled && 'needs TEST_DB=postgres' }, () => {
  let pg: PrivatePostgres;
  let cluster: Cluster;
  let A: Instance;
  let B: Instance;

  before(
    async () => {
      pg = await PrivatePostgres.create();
      cluster = await startInstances(2, {
        DATABASE_URL: pg.url,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
        WEBHOOK_TIMEOUT_MS: '2000',
        // 1 s, 2 s, 4 s … between attempts: the kill lands between attempts, not inside one (whose 60 s lease would delay the restart's delivery)
        WEBHOOK_RETRY_BASE_MS: '1000',
      });
      [A, B] = cluster.instances as [Instance, Instance];
      // This process writes its data (accounts, conversations, outbox events) into the same database.
      process.env.DATABASE_URL = pg.url;
      process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS = '1';
    },
    { timeout: 180_000 },
  );
  after(
    async () => {
      await cluster?.close();
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase().catch(() => {});
      pg?.destroy();
    },
    { timeout: 60_000 },
  );

  /** An account with an endpoint at `url` and `n` imported conversations, each given a conversation.created event. */
  async function eventsFor(url: string, n: number) {
    const { createTestAccount, importLines, conversationLine, newChannelIds } = await import('../helpers/builders');
    const { createWebhookEndpoint } = await import('../../lib/webhooks/service');
    const { recordConversationCreated } = await import('../../lib/webhooks/events');
    const { getDb } = await import('../../db/client');
    const acct = await createTestAccount();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url, events: ['conversation.created'] });
    const [ch] = await newChannelIds(1);
    const convs = Array.from({ length: n }, () => conversationLine({ channel_id: ch! }));
    await importLines(acct.accountId, convs);
    const db = await getDb();
    for (const c of convs) {
      await db.transaction((tx) => recordConversationCreated(tx as unknown as typeof db, acct.accountId, c.conversation_id));
    }
    return { acct, ep, ids: convs.map((c) => c.conversation_id) };
  }

  it('two instances deliver each event exactly once', { timeout: 90_000 }, async () => {
    const rx = await new WebhookReceiver(() => ({ status: 200, delayMs: 150 })).start();
    try {
      const { ids } = await eventsFor(rx.url, 150);
      await rx.until((r) => r.length >= 150, 'all 150 events', 60_000);
      await sleep(1500); // any duplicate would arrive meanwhile
      const perId = new Map<string, number>();
      for (const r of rx.received) perId.set(String(r.headers['webhook-id']), (perId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
      assert.equal(rx.received.length, 150, 'no event delivered twice');
      assert.equal(perId.size, 150);
      assert.deepEqual(new Set(rx.received.map((r) => bodyOf(r).data.conversation_id)), new Set(ids));
      // One instance sends at most 4 at once to an endpoint: more at once proves both instances delivered.
      assert.ok(rx.maxInFlight > 4 && rx.maxInFlight <= 8, `both instances sent, each within its 4 slots (at most ${rx.maxInFlight} at once)`);
      assert.ok(A.running && B.running);
    } finally {
      await rx.stop();
    }
  });

  it('two instances and two accounts: every event once, each conversation in order, though every first attempt fails', { timeout: 90_000 }, async () => {
    const { recordConversationCreated } = await import('../../lib/webhooks/events');
    const { getDb, rows } = await import('../../db/client');
    const { sql } = await import('drizzle-orm');
    const seen = new Set<string>();
    // Each event's first attempt fails, so its conversation's later events must wait for its retry.
    const rx = await new WebhookReceiver((_n, body) => {
      if (seen.has(body)) return { status: 200, delayMs: 20 };
      seen.add(body);
      return { status: 500 };
    }).start();
    try {
      const a = await eventsFor(rx.url, 12);
      const b = await eventsFor(rx.url, 12);
      const db = await getDb();
      for (const { acct, ids } of [a, b]) {
        for (const id of ids) {
          for (let i = 0; i < 2; i++) await db.transaction((tx) => recordConversationCreated(tx as unknown as typeof db, acct.accountId, id));
        }
      }
      const want = await rows<{ id: string; conversation_id: string }>(
        db,
        sql`
        SELECT id, conversation_id FROM webhook_events WHERE account_id IN (${a.acct.accountId}, ${b.acct.accountId}) ORDER BY seq`,
      );
      assert.equal(want.length, 72);
      const ok = () => rx.received.filter((r) => r.status === 200);
      await rx.until(() => ok().length >= 72, 'all 72 events, each after one failed attempt', 60_000);
      await sleep(1500); // any duplicate would arrive meanwhile
      const got = ok().map((r) => String(r.headers['webhook-id']));
      assert.equal(new Set(got).size, 72, 'no event delivered twice');
      assert.equal(got.length, 72);
      const byConversation = (ids: string[]) => {
        const conv = new Map(want.map((w) => [w.id, w.conversation_id]));
        const m = new Map<string, string[]>();
        for (const id of ids) m.set(conv.get(id)!, [...(m.get(conv.get(id)!) ?? []), id]);
        return m;
      };
      assert.deepEqual(byConversation(got), byConversation(want.map((w) => w.id)), 'each conversation in the order its events were written');
    } finally {
      await rx.stop();
    }
  });

  it('an instance killed while its receiver is down delivers after the restart (same webhook-id)', { timeout: 150_000 }, async () => {
    const { listWebhookDeliveries } = await import('../../lib/webhooks/service');
    const { eventually } = await import('../helpers/widget');
    await B.stop('SIGTERM');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`; // nothing listens yet: connection refused
    const { acct, ep } = await eventsFor(url, 1);
    const [failed] = await eventually(
      () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
      (l) => (l[0]?.attempts ?? 0) >= 1,
      'a failed attempt',
      20_000,
    );
    assert.equal(failed!.status, 'pending');
    assert.match(failed!.last_error!, /connection failed: ECONNREFUSED/);
    const kill = await A.stop('SIGKILL');
    assert.equal(kill.signal, 'SIGKILL');
    const rx = await new WebhookReceiver().start(port);
    try {
      await sleep(500);
      assert.equal(rx.received.length, 0, 'nobody delivers while every instance is down');
      await A.start();
      const [r] = await rx.until((x) => x.length >= 1, 'the event after the restart', 60_000);
      assert.equal(r!.headers['webhook-id'], failed!.event_id, 'the same webhook-id as the failed attempt');
      const [done] = await eventually(
        () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
        (l) => l[0]?.status === 'delivered',
        'delivered',
      );
      assert.ok(done!.attempts >= 2);
    } finally {
      await rx.stop();
      if (!B.running) await B.start();
    }
  });

  it('the worker survives PostgreSQL being down and delivers when it is back', { timeout: 150_000 }, async () => {
    const rx = await new WebhookReceiver().start();
    try {
      await eventsFor(rx.url, 1);
      await rx.until((x) => x.length >= 1, 'a first delivery', 20_000);
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase();
      pg.stop();
      await sleep(4000);
      assert.ok(A.running && B.running, `both instances still run\n${A.output.slice(-2000)}`);
      assert.match(A.output + B.output, /webhook worker: cannot read due deliveries/, 'the outage is logged');
      pg.start();
      await eventsFor(rx.url, 3);
      await rx.until((x) => x.length >= 4, 'deliveries after the outage', 60_000);
      assert.ok(A.running && B.running);
    } finally {
      await rx.stop();
    }
  });

  it('SIGTERM lets a delivery in flight finish, records it, and exits 0', { timeout: 120_000 }, async () => {
    const { listWebhookDeliveries } = await import('../../lib/webhooks/service');
    const { eventually } = await import('../helpers/widget');
    await B.stop('SIGTERM');
    const rx = await new WebhookReceiver(() => ({ status: 200, delayMs: 1500 })).start();
    try {
      const { acct, ep } = await eventsFor(rx.url, 1);
      await rx.until((r) => r.length >= 1, 'the request in flight', 20_000);
      const stopped = await A.stop('SIGTERM');
      assert.equal(stopped.code, 0, `a clean exit\n${A.output.slice(-2000)}`);
      const [d] = await eventually(
        () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
        (l) => l.length > 0,
        'the delivery',
      );
      assert.equal(d!.status, 'delivered', 'recorded before the database closed');
      assert.equal(d!.attempts, 1);
      assert.equal(d!.last_status_code, 200);
      assert.ok(d!.last_latency_ms! >= 1400);
      assert.equal(rx.received.length, 1);
    } finally {
      await rx.stop();
    }
  });
});
