/**
 * Webhooks (docs/contracts.md §11) against a real receiver on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_NETWORKS=1
 * for this server): widget activity produces signed events whose data is the Customer API's
 * record; failures are retried with the same webhook-id; order per conversation; a slow receiver
 * holds up no other endpoint; the automatic pause; secret rotation; tenancy. A tiny retry base
 * (WEBHOOK_RETRY_BASE_MS) compresses the ≥ 24 h schedule into milliseconds.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { V2 } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectVisitor, createTestWidgetClient, eventually, sleep, type Visitor } from '../helpers/widget';
import { bodyOf, WebhookReceiver, type Received } from '../helpers/webhook-receiver';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  resendWebhookDelivery,
  rotateWebhookSecret,
  setWebhookPaused,
} from '../../lib/webhooks/service';
import { HELD_TOO_LONG, REPLAY_HOURS, RETENTION_DAYS, RETRY_MULTIPLIERS } from '../../lib/webhooks/rules';
import { freePort } from '../helpers/instances';

const BASE_MS = 0.1; // the whole schedule: ~2 s of waits; the automatic pause after 8.64 s of failures
let server: TestServer;
const receivers: WebhookReceiver[] = [];
before(
  async () => {
    server = await startTestServer({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      WEBHOOK_RETRY_BASE_MS: String(BASE_MS),
      WEBHOOK_TIMEOUT_MS: '1500',
      TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
      SOCKET_EVENTS_PER_10S: '1000',
    });
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

async function receiver(respond?: ConstructorParameters<typeof WebhookReceiver>[0]) {
  const r = await new WebhookReceiver(respond).start();
  receivers.push(r);
  return r;
}

type AskAck = { conversation_id: string; response_id: string };

async function visitorOf(accountId: number): Promise<Visitor> {
  const client = await createTestWidgetClient(accountId, ['example.com']);
  const issued = await backendToken(server.url, client);
  return connectVisitor(server.url, issued.access_token, 'https://example.com');
}

/** Asks and waits for the stored answer (a new conversation unless `conversation_id`). */
async function ask(v: Visitor, text: string, conversationId?: string): Promise<AskAck> {
  const ack = await v.ok<AskAck>('ask', { client_message_id: `m-${Math.random()}`, text, ...(conversationId ? { conversation_id: conversationId } : {}) });
  await v.finished(ack.response_id);
  return ack;
}

const types = (rs: Received[]) => rs.map((r) => bodyOf(r).type);

describe('webhooks: events, signatures and data', () => {
  it('signs conversation.created, response.created and response.feedback; data is the Customer API record', async (t) => {
    const acct = await createTestAccount();
    const rx = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url });
    assert.match(ep.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(ep.events, [
      'conversation.created',
      'response.created',
      'response.feedback',
      'conversation.status_changed',
      'message.created',
      'csat.submitted',
      'conversation.deleted',
    ]);
    const onlyResponses = await receiver();
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: onlyResponses.url, events: ['response.created'] });
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());

    const ack = await ask(v, 'What are your opening hours?');
    await v.ok('feedback', { response_id: ack.response_id, value: 'like' });
    await v.ok('comment', { response_id: ack.response_id, text: 'Thanks!' });
    const got = await rx.until((r) => r.length >= 4, 'four events');
    assert.deepEqual(types(got), ['conversation.created', 'response.created', 'response.feedback', 'response.feedback']);

    const wh = new Webhook(ep.secret);
    for (const r of got) {
      const h = r.headers as Record<string, string>;
      assert.match(h['webhook-id']!, /^msg_[0-9a-f]{32}$/);
      assert.ok(Math.abs(Number(h['webhook-timestamp']) - Date.now() / 1000) < 30, 'webhook-timestamp is now, in Unix seconds');
      assert.match(h['webhook-signature']!, /^v1,[A-Za-z0-9+/]+=*$/);
      assert.equal(h['content-type'], 'application/json');
      assert.deepEqual(wh.verify(r.body, h), JSON.parse(r.body), 'the library verifies the signature');
      const body = bodyOf(r);
      assert.deepEqual(Object.keys(body), ['type', 'timestamp', 'data']);
      assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 4, 'one id per event');
    assert.throws(() => new Webhook(ep.secret).verify(got[0]!.body.replace('}', ' }'), got[0]!.headers as Record<string, string>));

    const get = api(server.url, acct.key);
    const conv = (await get(`${V2}/conversation?resultsPerPage=100`)).body.results.find((c: { id: string }) => c.id === ack.conversation_id);
    const created = bodyOf(got[0]!).data;
    assert.deepEqual(Object.keys(created), Object.keys(conv), 'the conversation record, keys in the API order');
    assert.deepEqual({ ...created, response_count: 1, updated_at: conv.updated_at }, conv);
    assert.equal(created.response_count, 0, 'as it was when created');

    // The webhook carries the record as the list gives it: GET /response/{id} adds comment_list.
    const { comment_list: comments, ...record } = (await get(`${V2}/response/${ack.response_id}`)).body;
    assert.equal(comments.length, 1);
    const stored = bodyOf(got[1]!).data;
    assert.deepEqual(Object.keys(stored), Object.keys(record));
    assert.deepEqual({ ...stored, likes: 1, comments: 1 }, record);
    assert.deepEqual([bodyOf(got[2]!).data.likes, bodyOf(got[2]!).data.comments], [1, 0], 'after the like');
    assert.deepEqual(bodyOf(got[3]!).data, record, 'after the comment: the record as the API returns it now');

    const only = await onlyResponses.until((r) => r.length >= 1, 'the response.created event');
    await sleep(300);
    assert.deepEqual(types(onlyResponses.received), ['response.created'], 'an endpoint gets only the types it chose');
    assert.equal(only[0]!.headers['webhook-id'], got[1]!.headers['webhook-id'], 'one event, one id, for every endpoint');

    const listed = await listWebhookEndpoints(acct.accountId);
    assert.equal(listed.endpoints.length, 2);
    assert.ok(listed.endpoints.every((e) => !('secret' in e) && e.status === 'active'));
    assert.equal(listed.endpoints[0]!.last_delivery?.status, 'delivered');
  });

  it('an event type nobody subscribed to writes nothing to the outbox (answers and conversations of such accounts skip it)', async (t) => {
    const { sql } = await import('drizzle-orm');
    const { getDb, rows } = await import('../../db/client');
    const db = await getDb();
    const eventsOf = async (accountId: number) =>
      (
        await rows<{ type: string }>(
          db,
          sql`
      SELECT type FROM webhook_events WHERE account_id = ${accountId} ORDER BY seq`,
        )
      ).map((r) => r.type);
    const none = await createTestAccount();
    const some = await createTestAccount();
    const rx = await receiver();
    await createWebhookEndpoint(CLI, { accountId: some.accountId, url: rx.url, events: ['conversation.created'] });
    for (const acct of [none, some]) {
      const v = await visitorOf(acct.accountId);
      t.after(() => v.close());
      const first = await ask(v, 'Hello?');
      await ask(v, 'And again?', first.conversation_id);
    }
    assert.deepEqual(await eventsOf(none.accountId), [], 'no endpoint: no outbox rows');
    assert.deepEqual(await eventsOf(some.accountId), ['conversation.created'], 'only the subscribed type, once');
    const [kept] = await rx.until((r) => r.length >= 1, 'the conversation.created event');
    assert.equal(bodyOf(kept!).type, 'conversation.created');
  });

  it('a receiver that fails twice gets the same webhook-id three times; the log shows it', async (t) => {
    const acct = await createTestAccount();
    const rx = await receiver((n) => ({ status: n < 2 ? 503 : 200 }));
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url, events: ['conversation.created'] });
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    await ask(v, 'Hello?');
    const got = await rx.until((r) => r.length >= 3, 'three attempts');
    await sleep(200);
    assert.equal(rx.received.length, 3, 'no attempt after the success');
    assert.deepEqual(
      got.map((r) => r.status),
      [503, 503, 200],
    );
    assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'the same webhook-id on every retry');
    assert.equal(new Set(got.map((r) => r.body)).size, 1, 'the same body');
    const [log] = await eventually(
      () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
      (l) => l[0]?.status === 'delivered',
      'delivered',
    );
    assert.equal(log!.attempts, 3);
    assert.equal(log!.last_status_code, 200);
    assert.equal(log!.type, 'conversation.created');
    assert.ok(typeof log!.last_latency_ms === 'number' && log!.last_latency_ms >= 0);

    // "Send again": the same event, the same id.
    await resendWebhookDelivery(acct.accountId, log!.id);
    await rx.until((r) => r.length >= 4, 'the resent event');
    assert.equal(rx.received[3]!.headers['webhook-id'], got[0]!.headers['webhook-id']);
  });

  it('delivers the events of one conversation in order, even when an earlier one is being retried', async (t) => {
    const acct = await createTestAccount();
    // The first event fails three times; the rest arrive slowly.
    const rx = await receiver((n) => (n < 3 ? { status: 500 } : { status: 200, delayMs: 20 }));
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url });
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    const first = await ask(v, 'First question?');
    const second = await ask(v, 'Second question?', first.conversation_id);
    const expected: Array<[number, number]> = [];
    for (const [value, likes, dislikes] of [
      ['like', 1, 0],
      ['dislike', 0, 1],
      ['like', 1, 0],
      ['like', 0, 0],
      ['dislike', 0, 1],
    ] as const) {
      await v.ok('feedback', { response_id: second.response_id, value });
      expected.push([likes, dislikes]);
    }
    const got = await rx.until((r) => r.filter((x) => x.status === 200).length >= 8, 'eight events');
    const ok = got.filter((r) => r.status === 200).map(bodyOf);
    assert.deepEqual(
      ok.map((b) => b.type),
      ['conversation.created', 'response.created', 'response.created', ...expected.map(() => 'response.feedback')],
    );
    assert.deepEqual(
      ok.slice(1, 3).map((b) => b.data.response_id),
      [first.response_id, second.response_id],
    );
    assert.deepEqual(
      ok.slice(3).map((b) => [b.data.likes, b.data.dislikes]),
      expected,
      'feedback in the order it happened',
    );
    assert.deepEqual(
      got.slice(0, 3).map((r) => bodyOf(r).type),
      Array(3).fill('conversation.created'),
      'nothing overtook the retried first event',
    );
  });

  it('a slow receiver does not hold up another endpoint', async (t) => {
    const acct = await createTestAccount();
    const slow = await receiver(() => 'hang');
    const fast = await receiver();
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: slow.url, events: ['conversation.created'] });
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: fast.url, events: ['conversation.created'] });
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    for (let i = 0; i < 8; i++) await ask(v, `Question number ${i}?`);
    // Measured from the last question, not the first: asking eight questions takes seconds on a busy machine.
    const asked = Date.now();
    await fast.until((r) => r.length >= 8, 'all eight events at the fast endpoint', 5000);
    const fastLag = Date.now() - asked;
    assert.ok(slow.received.length >= 1 && slow.maxInFlight <= 4, `the hanging endpoint holds at most 4 deliveries at once (got ${slow.maxInFlight})`);
    assert.ok(fastLag < 1500, `the fast endpoint was not held up by the slow one's 1.5 s timeouts (${fastLag} ms after the last question)`);
    assert.ok(fast.received.every((r) => slow.received.length === 0 || r.at < asked + 1500));
  });
});

describe('webhooks: retry schedule, automatic pause, manual pause, rotation', () => {
  it('gives up after the schedule; an endpoint failing longer than the pause rule is paused, and resumes', async (t) => {
    const acct = await createTestAccount();
    let failing = true;
    const rx = await receiver(() => ({ status: failing ? 500 : 200 }));
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url, events: ['conversation.created'] });
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    await ask(v, 'One?');
    const [first] = await eventually(
      () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
      (l) => l[0]?.status === 'failed',
      'the schedule ran out',
      8500,
    );
    assert.equal(first!.attempts, RETRY_MULTIPLIERS.length + 1, 'every attempt of the schedule was made');
    assert.equal(rx.received.length, RETRY_MULTIPLIERS.length + 1);
    assert.equal((await listWebhookEndpoints(acct.accountId)).endpoints[0]!.status, 'active', 'not paused yet');
    await sleep(86_400 * BASE_MS + 100); // the pause rule: failing for 5 days at the default base
    await ask(v, 'Two?');
    const paused = await eventually(
      () => listWebhookEndpoints(acct.accountId),
      (l) => l.endpoints[0]!.status === 'paused',
      'paused',
      5000,
    );
    assert.match(
      paused.endpoints[0]!.pause_reason!,
      /^Paused automatically: every delivery failed for .*; last error: HTTP 500 \(failing since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)$/,
    );
    const before = rx.received.length;
    await sleep(300);
    assert.equal(rx.received.length, before, 'nothing is sent while paused');
    failing = false;
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, false);
    await rx.until((r) => r.at(-1)?.status === 200, 'the held event after resuming');
    assert.equal(bodyOf(rx.received.at(-1)!).data.title, 'Two?');
    assert.equal((await listWebhookEndpoints(acct.accountId)).endpoints[0]!.status, 'active');
  });

  it('holds events while an admin pauses it; a rotated secret and the previous one both sign during the overlap', async (t) => {
    const acct = await createTestAccount();
    const rx = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url, events: ['conversation.created'] });
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, true);
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    await ask(v, 'Held?');
    await sleep(400);
    assert.equal(rx.received.length, 0);
    const rotated = await rotateWebhookSecret(CLI, acct.accountId, ep.endpoint_id);
    assert.notEqual(rotated.secret, ep.secret);
    assert.equal(rotated.previous_secret_signs_for_hours, 24);
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, false);
    const [r] = await rx.until((x) => x.length >= 1, 'the held event');
    const h = r!.headers as Record<string, string>;
    assert.equal(h['webhook-signature']!.split(' ').length, 2, 'two signatures during the overlap');
    assert.ok(new Webhook(rotated.secret).verify(r!.body, h), 'the new secret verifies');
    assert.ok(new Webhook(ep.secret).verify(r!.body, h), 'the previous secret verifies');
    const listed = (await listWebhookEndpoints(acct.accountId)).endpoints[0]!;
    assert.match(listed.previous_secret_valid_until!, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });
});

describe('webhooks: paused endpoints keep no live queue', () => {
  it(`pausing holds deliveries; resuming sends those of the last ${REPLAY_HOURS} h in order and fails older ones`, async (t) => {
    const { sql } = await import('drizzle-orm');
    const { getDb, rows } = await import('../../db/client');
    const acct = await createTestAccount();
    const rx = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url, events: ['conversation.created', 'response.created'] });
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, true);
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    const stale = await ask(v, 'Asked long ago?');
    const fresh = await ask(v, 'Asked just now?');
    await ask(v, 'And a follow-up?', fresh.conversation_id);
    const db = await getDb();
    const statuses = async () =>
      (
        await rows<{ status: string; n: number }>(
          db,
          sql`
      SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${ep.endpoint_id} GROUP BY status ORDER BY status`,
        )
      ).map((r) => ({ status: r.status, n: r.n }));
    assert.deepEqual(await statuses(), [{ status: 'held', n: 5 }], 'nothing pending while paused');
    await db.execute(sql`UPDATE webhook_deliveries SET created_at = now() - make_interval(hours => ${REPLAY_HOURS + 1})
      WHERE endpoint_id = ${ep.endpoint_id} AND conversation_id = ${stale.conversation_id}`);
    await sleep(300);
    assert.equal(rx.received.length, 0);

    assert.deepEqual(await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, false), {
      endpoint_id: ep.endpoint_id,
      status: 'active',
      replayed: 3,
      expired: 2,
    });
    const got = await rx.until((r) => r.length >= 3, 'the three fresh held events');
    assert.deepEqual(
      got.map((r) => [bodyOf(r).type, bodyOf(r).data.conversation_id]),
      [
        ['conversation.created', fresh.conversation_id],
        ['response.created', fresh.conversation_id],
        ['response.created', fresh.conversation_id],
      ],
      'in order, the stale conversation not sent',
    );
    const log = await listWebhookDeliveries(acct.accountId, ep.endpoint_id);
    const failed = log.filter((d) => d.status === 'failed');
    assert.equal(failed.length, 2);
    assert.ok(failed.every((d) => d.last_error === HELD_TOO_LONG && d.attempts === 0));
    await resendWebhookDelivery(acct.accountId, failed[0]!.id);
    await rx.until((r) => r.length >= 4, '"Send again" still sends a held-too-long delivery');
  });

  it('a pause waits for an event being written, then holds its delivery; deliveries held too long expire', async () => {
    const { sql } = await import('drizzle-orm');
    const { getDb, rows } = await import('../../db/client');
    const { expireHeldDeliveries } = await import('../../db/queries/webhooks');
    const { recordConversationCreated } = await import('../../lib/webhooks/events');
    const { importLines, conversationLine, newChannelIds } = await import('../helpers/builders');
    const acct = await createTestAccount();
    const rx = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url, events: ['conversation.created'] });
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [conv]);
    const db = await getDb();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let written!: () => void;
    const wrote = new Promise<void>((r) => {
      written = r;
    });
    const writing = db.transaction(async (tx) => {
      await recordConversationCreated(tx as unknown as typeof db, acct.accountId, conv.conversation_id);
      written();
      await gate;
    });
    await wrote;
    let pausedAt = 0;
    const pausing = setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, true).then(() => {
      pausedAt = Date.now();
    });
    await sleep(300);
    assert.equal(pausedAt, 0, 'the pause waits for the transaction that writes the event');
    release();
    await Promise.all([writing, pausing]);
    const status = async () =>
      (await rows<{ status: string }>(db, sql`SELECT status FROM webhook_deliveries WHERE endpoint_id = ${ep.endpoint_id}`))[0]!.status;
    assert.equal(await status(), 'held');
    await sleep(300);
    assert.equal(rx.received.length, 0, 'not sent while paused');

    await db.execute(sql`UPDATE webhook_deliveries SET created_at = now() - make_interval(hours => ${REPLAY_HOURS + 1}) WHERE endpoint_id = ${ep.endpoint_id}`);
    assert.ok((await expireHeldDeliveries(db, REPLAY_HOURS, HELD_TOO_LONG)) >= 1);
    assert.equal(await status(), 'failed');
  });
});

describe('webhooks: retention', () => {
  it('finished events older than RETENTION_DAYS are deleted; held ones are kept', async (t) => {
    const { sql } = await import('drizzle-orm');
    const { getDb } = await import('../../db/client');
    const { pruneWebhookEvents } = await import('../../lib/webhooks/worker');
    const acct = await createTestAccount();
    const rx = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url, events: ['conversation.created'] });
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    await ask(v, 'Old and delivered?');
    await eventually(
      () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
      (l) => l[0]?.status === 'delivered',
      'delivered',
    );
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, true);
    await ask(v, 'Old and still pending?');
    const db = await getDb();
    await db.execute(sql`UPDATE webhook_events SET created_at = now() - make_interval(days => ${RETENTION_DAYS + 1}) WHERE account_id = ${acct.accountId}`);
    assert.ok((await pruneWebhookEvents()) >= 1);
    const left = await listWebhookDeliveries(acct.accountId, ep.endpoint_id);
    assert.deepEqual(
      left.map((d) => d.status),
      ['held'],
      'the delivered event is gone, the held one kept',
    );
    await setWebhookPaused(CLI, acct.accountId, ep.endpoint_id, false);
    await rx.until((r) => r.length >= 2, 'the kept event after resuming');
  });
});

describe('webhooks: tenancy and input', () => {
  it("another account's endpoint cannot be seen, changed or deleted; bad ids and URLs are precise errors", async () => {
    const a = await createTestAccount();
    const b = await createTestAccount();
    const rx = await receiver();
    const ep = await createWebhookEndpoint(CLI, { accountId: a.accountId, url: rx.url });
    assert.deepEqual((await listWebhookEndpoints(b.accountId)).endpoints, []);
    const notFound = { code: 'not_found', message: `No webhook endpoint with id ${ep.endpoint_id}.` };
    await assert.rejects(deleteWebhookEndpoint(CLI, b.accountId, ep.endpoint_id), notFound);
    await assert.rejects(rotateWebhookSecret(CLI, b.accountId, ep.endpoint_id), notFound);
    await assert.rejects(setWebhookPaused(CLI, b.accountId, ep.endpoint_id, true), notFound);
    await assert.rejects(listWebhookDeliveries(b.accountId, ep.endpoint_id), notFound);
    assert.equal((await listWebhookEndpoints(a.accountId)).endpoints[0]!.status, 'active', 'untouched');
    await assert.rejects(deleteWebhookEndpoint(CLI, b.accountId, 'nope'), { code: 'invalid_request', message: /endpoint-id: must be an endpoint id/ });
    for (const [url, message] of [
      ['ftp://example.com/x', 'url: must use http or https, not ftp'],
      ['not a url', 'url: must be an absolute http:// or https:// URL'],
      ['https://user:pw@93.184.215.14/', 'url: must not contain a user name or password'],
      ['', 'url: is required'],
    ]) {
      await assert.rejects(createWebhookEndpoint(CLI, { accountId: a.accountId, url }), { code: 'invalid_request', message }, url);
    }
    await assert.rejects(createWebhookEndpoint(CLI, { accountId: a.accountId, url: rx.url, events: ['response.deleted'] }), {
      code: 'invalid_request',
      message:
        'event: "response.deleted" is not an event type; use conversation.created, response.created, response.feedback, conversation.status_changed, message.created, csat.submitted, conversation.deleted',
    });
    assert.deepEqual(await deleteWebhookEndpoint(CLI, a.accountId, ep.endpoint_id), { endpoint_id: ep.endpoint_id, deleted: true });
    assert.deepEqual((await listWebhookEndpoints(a.accountId)).endpoints, []);
  });

  it('imports send no events', async () => {
    const { importLines, newChannelIds, conversationLine, responseLine } = await import('../helpers/builders');
    const acct = await createTestAccount();
    const rx = await receiver();
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: rx.url });
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [conv, responseLine(conv)]);
    await sleep(500);
    assert.equal(rx.received.length, 0);
  });
});

describe("webhooks: README's receiver", () => {
  it('the Node example verifies real deliveries and refuses a forged one', async (t) => {
    const readme = fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
    const code = /```js\n(\/\/ receiver\.mjs[\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(code, "README's receiver example");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-receiver-'));
    fs.symlinkSync(path.join(import.meta.dirname, '..', '..', 'node_modules'), path.join(dir, 'node_modules'));
    fs.writeFileSync(path.join(dir, 'receiver.mjs'), code);
    const acct = await createTestAccount();
    const port = await freePort();
    const ep = await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: `http://127.0.0.1:${port}/`, events: ['conversation.created'] });
    const child = spawn(process.execPath, ['receiver.mjs'], {
      cwd: dir,
      env: { ...process.env, PORT: String(port), SVC_WEBHOOK_SECRET: ep.secret },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    t.after(() => {
      child.kill();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    await eventually(
      () =>
        fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).then(
          (r) => r.status,
          () => 0,
        ),
      (s) => s === 400,
      'the receiver refuses an unsigned request',
    );
    const v = await visitorOf(acct.accountId);
    t.after(() => v.close());
    const ack = await ask(v, 'Is the README right?');
    await eventually(
      async () => out,
      (o) => o.includes('conversation.created'),
      'the receiver printed the event',
    );
    const line = out.trim().split('\n')[0]!;
    const [id, type] = line.split(' ', 2);
    const data = line.slice(id!.length + type!.length + 2);
    assert.match(id!, /^msg_/);
    assert.equal(type, 'conversation.created');
    assert.equal(JSON.parse(data!).conversation_id, ack.conversation_id);
    const [log] = await eventually(
      () => listWebhookDeliveries(acct.accountId, ep.endpoint_id),
      (l) => l[0]?.status === 'delivered',
      'delivered',
    );
    assert.equal(log!.last_status_code, 204);
  });
});
