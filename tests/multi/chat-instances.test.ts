/**
 * Chat across instances (docs/contracts.md §9): two real server processes on one PostgreSQL and one
 * (private) Redis, answering through a slow local model. Cross-instance streaming and resume,
 * interleaved asks into one conversation, kill -9 mid-answer, a SIGTERM drain under chat, and a
 * Redis restart. Each test is bounded in time.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { ServerEvent } from '../../lib/chat/protocol';
import { V2 } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { PrivateRedis, SlowModel, startInstances, type Cluster, type Instance } from '../helpers/instances';
import { addKnowledge, backendToken, connectVisitor, createTestWidgetClient, sleep, type Visitor } from '../helpers/widget';

const onPostgres = process.env.TEST_DB === 'postgres' && Boolean(process.env.DATABASE_URL);
const ORIGIN = 'https://example.com';
const QUESTION = 'How long does the flux capacitor warranty last?';
type AskAck = { conversation_id: string; response_id: string; duplicate: boolean };

describe('chat across instances', { skip: !onPostgres && 'needs TEST_DB=postgres and DATABASE_URL' }, () => {
  let redis: PrivateRedis;
  let model: SlowModel;
  let cluster: Cluster;
  let A: Instance;
  let B: Instance;
  const open: Visitor[] = [];

  before(
    async () => {
      redis = await PrivateRedis.create();
      model = await new SlowModel(20, 100).start();
      cluster = await startInstances(2, {
        DATABASE_URL: process.env.DATABASE_URL!,
        REDIS_URL: redis.url,
        REDIS_PREFIX: `multi-${process.pid}-${Date.now()}:`,
        LLM_BASE_URL: model.url,
        LLM_API_KEY: 'sk-test',
        CHAT_ANSWER_LEASE_SECONDS: '4',
        SHUTDOWN_GRACE_SECONDS: '20',
        TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
        TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
        SOCKET_EVENTS_PER_10S: '1000',
        ASKS_PER_MINUTE_PER_VISITOR: '1000',
      });
      [A, B] = cluster.instances as [Instance, Instance];
    },
    { timeout: 120_000 },
  );
  after(
    async () => {
      for (const v of open) v.close();
      await cluster?.close();
      await model?.stop();
      await redis?.stop();
    },
    { timeout: 60_000 },
  );

  /** An account with a document about the question, a widget client, and one visitor id. */
  async function setup() {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'warranty.md', '# Warranty\n\nThe flux capacitor warranty lasts two years from delivery.\n');
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const visitorId = `v_${randomUUID().replace(/-/g, '')}`;
    const connect = async (inst: Instance) => {
      const issued = await backendToken(inst.url, client, visitorId);
      const v = await connectVisitor(inst.url, issued.access_token, ORIGIN);
      open.push(v);
      return v;
    };
    return { acct, connect, get: (inst: Instance) => api(inst.url, acct.key) };
  }

  /** Every event after `lastSeq`, through as many resume pages as it takes. */
  async function resumeAll(v: Visitor, conversationId: string, lastSeq: number): Promise<ServerEvent[]> {
    const before = v.events.length;
    let from = lastSeq;
    for (let page = 0; page < 50; page++) {
      const ack = await v.ok<{ through_seq: number; more: boolean }>('conversation:resume', { conversation_id: conversationId, last_seq: from });
      from = ack.through_seq;
      if (!ack.more) break;
    }
    return v.events.slice(before);
  }

  /** An event's JSON with its keys sorted at every level (a live event and its stored copy list them in another order). */
  const canonical = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : v && typeof v === 'object'
        ? `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
            .join(',')}}`
        : JSON.stringify(v);
  const ends = (v: Visitor, responseId: string) => v.eventsOf(responseId).filter((e) => e.type === 'answer.done' || e.type === 'answer.error');
  const uniqueBySeq = (events: ServerEvent[]) => [...new Map(events.map((e) => [e.seq, e])).values()].sort((a, b) => a.seq - b.seq);

  it('streams an answer produced on one instance to the visitor on the other, and resumes there exactly', { timeout: 60_000 }, async () => {
    const { connect } = await setup();
    const onA = await connect(A);
    const ack = await onA.ok<AskAck>('ask', { client_message_id: 'x-1', text: QUESTION });
    await onA.until(() => onA.eventsOf(ack.response_id).filter((e) => e.type === 'answer.delta').length >= 3, 'three deltas on A');

    // The same visitor on B, mid-answer: resume from 0 gives the question and the deltas so far
    // (streaming on A), then the rest arrives live through Redis.
    const onB = await connect(B);
    const resumed = await resumeAll(onB, ack.conversation_id, 0);
    assert.ok(
      resumed.some((e) => e.type === 'question'),
      'the question is resumed on B',
    );
    assert.ok(resumed.filter((e) => e.type === 'answer.delta').length >= 3, 'deltas still streaming on A are resumed on B');
    await onB.finished(ack.response_id, 20_000);
    await onA.finished(ack.response_id, 20_000);

    const seenA = uniqueBySeq(onA.eventsOf(ack.response_id));
    const seenB = uniqueBySeq(onB.eventsOf(ack.response_id));
    assert.deepEqual(seenB, seenA, 'B saw every event A saw, once each by seq');
    const done = seenA.at(-1) as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.equal(done.type, 'answer.done');
    assert.equal(done.answer, model.answer);
    assert.equal(
      seenA
        .filter((e) => e.type === 'answer.delta')
        .map((e) => (e as { text: string }).text)
        .join(''),
      model.answer,
    );

    // A fresh resume on B from the middle returns exactly the events after that seq.
    const mid = seenA[Math.floor(seenA.length / 2)]!.seq;
    const later = await connect(B);
    assert.deepEqual(
      await resumeAll(later, ack.conversation_id, mid),
      seenA.filter((e) => e.seq > mid),
    );
  });

  it('gives interleaved asks from two instances into one conversation unique, gap-free seqs', { timeout: 90_000 }, async () => {
    const { connect, get } = await setup();
    const onA = await connect(A);
    const onB = await connect(B);
    const first = await onA.ok<AskAck>('ask', { client_message_id: 'i-0', text: QUESTION });
    const conversation_id = first.conversation_id;
    const acks = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? onA : onB).ok<AskAck>('ask', { conversation_id, client_message_id: `i-${i + 1}`, text: `${QUESTION} (${i + 1})` }, 20_000),
      ),
    );
    const all = [first, ...acks];
    const watcher = await connect(B);
    await watcher.ok('conversation:resume', { conversation_id, last_seq: 0 });
    for (const a of all) await watcher.finished(a.response_id, 60_000);

    // The resuming socket joins the room first, so an event still crossing Redis to A may also arrive
    // live: the same event twice is one (the widget keeps one per seq); two different ones with a seq are not.
    const received = await resumeAll(await connect(A), conversation_id, 0);
    const everything = [...new Map(received.map((e) => [`${e.seq}:${canonical(e)}`, e])).values()].sort((a, b) => a.seq - b.seq);
    const seqs = everything.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => i + 1),
      `seqs 1..n, each once, no gap: ${JSON.stringify(received.filter((e) => seqs.filter((x) => x === e.seq).length > 1))}`,
    );
    for (const a of all) {
      const end = everything.filter((e) => 'response_id' in e && e.response_id === a.response_id && (e.type === 'answer.done' || e.type === 'answer.error'));
      assert.equal(end.length, 1, `exactly one end for ${a.response_id}`);
      assert.equal(end[0]!.type, 'answer.done');
    }
    const list = await get(A)(`${V2}/response?conversation_id=${conversation_id}&resultsPerPage=100`);
    assert.equal(list.status, 200);
    assert.equal(list.body.count, all.length);
  });

  it('finishes an answer whose instance was killed with -9: exactly one end within 30 s, stored', { timeout: 120_000 }, async () => {
    const { connect, get } = await setup();
    const onA = await connect(A);
    const ack = await onA.ok<AskAck>('ask', { client_message_id: 'k-1', text: QUESTION });
    await onA.until(() => onA.eventsOf(ack.response_id).some((e) => e.type === 'answer.delta'), 'a delta on A');
    const killedAt = Date.now();
    await A.stop('SIGKILL');

    const onB = await connect(B);
    await onB.ok('conversation:resume', { conversation_id: ack.conversation_id, last_seq: 0 });
    await onB.finished(ack.response_id, 30_000);
    const took = Date.now() - killedAt;
    assert.ok(took < 30_000, `ended ${took} ms after the kill`);
    await sleep(1500);
    assert.equal(ends(onB, ack.response_id).length, 1, 'exactly one answer.done or answer.error');
    const stored = await get(B)(`${V2}/response/${ack.response_id}`);
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.equal(stored.body.question, QUESTION);
    await A.start();
  });

  it('drains on SIGTERM under chat: the answers finish, the widget resumes elsewhere, exit 0', { timeout: 120_000 }, async () => {
    const { connect, get } = await setup();
    const onA = await connect(A);
    const first = await onA.ok<AskAck>('ask', { client_message_id: 'd-0', text: QUESTION });
    const conversation_id = first.conversation_id;
    const acks = [first, ...(await Promise.all([1, 2].map((i) => onA.ok<AskAck>('ask', { conversation_id, client_message_id: `d-${i}`, text: QUESTION }))))];
    await onA.until(() => onA.events.some((e) => e.type === 'answer.delta'), 'streaming on A');

    const stopping = A.stop('SIGTERM', 60_000);
    // The widget is told and its transport closed; it reconnects to B and resumes.
    await onA.until(() => onA.disconnectReason !== undefined, 'the drain disconnect', 10_000);
    // While its answers finish, A tells load balancers it is not ready (docs/contracts.md §9).
    const readiness = await fetch(`${A.url}/readyz`);
    assert.equal(readiness.status, 503);
    assert.match(((await readiness.json()) as { reason: string }).reason, /draining/);
    const lastSeen = Math.max(0, ...onA.events.filter((e) => e.conversation_id === conversation_id).map((e) => e.seq));
    const onB = await connect(B);
    await resumeAll(onB, conversation_id, lastSeen);
    const ask = await onB.ok<AskAck>('ask', { conversation_id, client_message_id: 'd-3', text: QUESTION });
    for (const a of [...acks, ask]) await onB.finished(a.response_id, 60_000);
    const exit = await stopping;
    assert.equal(exit.code, 0, `exit code 0 after the drain:\n${A.output.slice(-2000)}`);

    const everything = await resumeAll(await connect(B), conversation_id, 0);
    for (const a of [...acks, ask]) {
      const end = everything.filter((e) => 'response_id' in e && e.response_id === a.response_id && (e.type === 'answer.done' || e.type === 'answer.error'));
      assert.equal(end.length, 1);
      assert.equal(end[0]!.type, 'answer.done', 'no failed answer in a drain');
      const stored = await get(B)(`${V2}/response/${a.response_id}`);
      assert.equal(stored.status, 200);
      assert.equal(stored.body.answer, model.answer);
    }
    await A.start();
  });

  it('keeps chat working within each instance while Redis is down, and cross-instance delivery returns by itself', { timeout: 120_000 }, async () => {
    const { connect } = await setup();
    const onA = await connect(A);
    const onB = await connect(B);
    const first = await onA.ok<AskAck>('ask', { client_message_id: 'r-0', text: QUESTION });
    await onB.ok('conversation:resume', { conversation_id: first.conversation_id, last_seq: 0 });
    await onB.finished(first.response_id, 20_000);

    await redis.stop();
    const during = await onA.ok<AskAck>('ask', { conversation_id: first.conversation_id, client_message_id: 'r-1', text: QUESTION });
    const end = await onA.finished(during.response_id, 20_000);
    assert.equal(end.type, 'answer.done', 'answered within the instance while Redis is away');

    await redis.start();
    // Delivery through Redis comes back: a new answer on A reaches B live.
    let delivered = false;
    for (let i = 0; i < 10 && !delivered; i++) {
      await sleep(1000);
      const again = await onA.ok<AskAck>('ask', { conversation_id: first.conversation_id, client_message_id: `r-after-${i}`, text: QUESTION });
      await onA.finished(again.response_id, 20_000);
      await sleep(500);
      delivered = onB.eventsOf(again.response_id).some((e) => e.type === 'answer.done');
    }
    assert.ok(delivered, 'an answer produced on A reached the visitor on B after Redis returned');
  });
});
