/**
 * A rolling restart of all three instances behind nginx under chat load (docs/contracts.md §9, issue 10
 * item 8): widgets keep asking while each instance in turn gets SIGTERM (drain), exits 0 and is
 * started again on its port before the next one goes; just before each SIGTERM a widget connected
 * to that very instance asks, so an answer is in flight during every drain. Afterwards every
 * acknowledged question has exactly one answer.done (0 lost, 0 doubled, 0 failed), is a response
 * record in the Customer API, and no visitor saw an error: the clients act as the widget does
 * (reconnect by themselves, resume from their last seq, re-send an ask refused as `unavailable`
 * with the same client_message_id).
 *
 * Needs DATABASE_URL (a fresh database), REDIS_URL (scripts/test.mjs's multi step) and nginx.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { io, type Socket } from 'socket.io-client';
import type { ServerEvent } from '../../lib/chat/protocol';
import { V2 } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { SlowModel, startInstances, type Cluster } from '../helpers/instances';
import { nginxAvailable, startNginx, type Nginx } from '../helpers/nginx';
import { addKnowledge, backendToken, createTestWidgetClient, sleep } from '../helpers/widget';

const ready = Boolean(process.env.TEST_DB === 'postgres' && process.env.DATABASE_URL && process.env.REDIS_URL && nginxAvailable());
const ORIGIN = 'https://example.com';
const VISITORS = 6;
const ASK_EVERY_MS = 1200;

type Ack = { ok: boolean; conversation_id?: string; response_id?: string; duplicate?: boolean; error?: { code: string; message: string } };

/** One widget, as lib/widget/client.ts behaves: reconnects by itself, resumes from its last seq, retries refused asks. */
class Widget {
  readonly socket: Socket;
  conversationId: string | null = null;
  lastSeq = 0;
  readonly bySeq = new Map<number, ServerEvent>();
  readonly acked = new Map<string, string>(); // client_message_id → response_id
  readonly visibleErrors: string[] = [];
  retriedAsks = 0;
  connects = 0;

  constructor(url: string, token: string, visitorId: string, from: string) {
    this.socket = io(`${url}/widget`, {
      transports: ['websocket'],
      forceNew: true,
      reconnectionDelay: 200,
      reconnectionDelayMax: 1000,
      timeout: 5000,
      extraHeaders: { origin: ORIGIN },
      auth: { token, visitor: visitorId },
      localAddress: from,
    } as Parameters<typeof io>[1]);
    this.socket.on('connect', () => {
      this.connects++;
      if (this.connects > 1 && this.conversationId) void this.resume();
    });
    this.socket.on('event', (e: ServerEvent) => this.take(e));
    this.socket.on('connect_error', (e: Error) => {
      // Transport errors and passing refusals are retried by the widget without showing anything.
      if (!this.socket.active && !/^(service unavailable|server draining|too many connections)/.test(e.message))
        this.visibleErrors.push(`refused: ${e.message}`);
    });
  }

  private take(e: ServerEvent) {
    if (e.conversation_id !== this.conversationId && this.conversationId !== null) return;
    this.bySeq.set(e.seq, e);
    this.lastSeq = Math.max(this.lastSeq, e.seq);
  }

  /** Every event after `from` (default: the last seq seen), page by page (the protocol's resume). */
  async resume(from = this.lastSeq) {
    for (let page = 0; page < 50 && this.conversationId; page++) {
      const ack = (await this.socket
        .timeout(10_000)
        .emitWithAck('conversation:resume', { conversation_id: this.conversationId, last_seq: from })
        .catch(() => null)) as { ok: boolean; through_seq?: number; more?: boolean } | null;
      if (!ack?.ok || !ack.more) return;
      from = ack.through_seq!;
    }
  }

  /** Sends one question until it is acknowledged; an `unavailable` refusal or a lost ack is re-sent with the same id. */
  async ask(text: string, deadline: number): Promise<void> {
    const cmid = randomUUID();
    while (Date.now() < deadline) {
      if (!this.socket.connected) {
        await sleep(100);
        continue;
      }
      const payload = { client_message_id: cmid, text, ...(this.conversationId ? { conversation_id: this.conversationId } : {}) };
      const ack = (await this.socket
        .timeout(10_000)
        .emitWithAck('ask', payload)
        .catch(() => null)) as Ack | null;
      if (ack?.ok) {
        this.conversationId ??= ack.conversation_id!;
        const before = this.acked.get(cmid);
        if (before && before !== ack.response_id) this.visibleErrors.push(`one ask, two response ids: ${before} ${ack.response_id}`);
        this.acked.set(cmid, ack.response_id!);
        return;
      }
      if (ack && ack.error?.code !== 'unavailable') {
        this.visibleErrors.push(`ask refused: ${JSON.stringify(ack.error)}`);
        return;
      }
      this.retriedAsks++;
      await sleep(300);
    }
    this.visibleErrors.push(`ask ${cmid} never acknowledged`);
  }

  endsOf(responseId: string): ServerEvent[] {
    return [...this.bySeq.values()].filter(
      (e) => 'response_id' in e && e.response_id === responseId && (e.type === 'answer.done' || e.type === 'answer.error'),
    );
  }
}

describe('rolling restart of three instances behind nginx under chat load', {
  skip: !ready && 'needs TEST_DB=postgres, DATABASE_URL, REDIS_URL and nginx',
}, () => {
  let model: SlowModel;
  let cluster: Cluster;
  let lb: Nginx;
  const widgets: Widget[] = [];

  before(
    async () => {
      model = await new SlowModel(8, 60).start(); // ~0.5 s answers: some are always in flight
      cluster = await startInstances(3, {
        DATABASE_URL: process.env.DATABASE_URL!,
        REDIS_URL: process.env.REDIS_URL!,
        REDIS_PREFIX: `${process.env.REDIS_PREFIX ?? 'svc-test:'}roll-${process.pid}-${Date.now()}:`,
        LLM_BASE_URL: model.url,
        LLM_API_KEY: 'sk-test',
        CHAT_ANSWER_LEASE_SECONDS: '4',
        SHUTDOWN_GRACE_SECONDS: '20',
        TRUST_PROXY: '1',
        TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
        TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
        SOCKET_EVENTS_PER_10S: '1000',
        ASKS_PER_MINUTE_PER_VISITOR: '1000',
      });
      lb = await startNginx(cluster.instances.map((i) => `127.0.0.1:${i.port}`));
    },
    { timeout: 300_000 },
  );

  after(
    async () => {
      for (const w of widgets) w.socket.close();
      await lb?.stop();
      await cluster?.close();
      await model?.stop();
    },
    { timeout: 60_000 },
  );

  it('SIGTERM, exit 0 and start again, one instance at a time: 0 lost, 0 doubled, 0 failed, nothing visible', { timeout: 300_000 }, async () => {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'warranty.md', '# Warranty\n\nThe flux capacitor warranty lasts two years.\n');
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    for (let i = 0; i < VISITORS; i++) {
      const visitorId = `v_${randomUUID().replace(/-/g, '')}`;
      const token = await backendToken(lb.url, client, visitorId);
      const w = new Widget(lb.url, token.access_token, visitorId, `127.0.0.${10 + i}`);
      widgets.push(w);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('a widget did not connect through nginx')), 15_000);
        w.socket.once('connect', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    // The visitors are spread over the instances (nginx hashes the client address).
    const spread = await Promise.all(
      cluster.instances.map(async (inst) => {
        const text = await (await fetch(`${inst.url}/metrics`)).text();
        return Number(/^svc_widget_sockets_connected\s+(\d+)/m.exec(text)?.[1] ?? NaN);
      }),
    );
    assert.equal(
      spread.reduce((a, b) => a + b, 0),
      VISITORS,
      `sockets per instance: ${spread}`,
    );
    assert.ok(spread.filter((n) => n > 0).length >= 2, `visitors on at least two instances: ${spread}`);

    // Load: every visitor asks every ASK_EVERY_MS until the roll is over.
    let rolling = true;
    const load = widgets.map(async (w, i) => {
      await sleep(i * (ASK_EVERY_MS / VISITORS));
      let n = 0;
      while (rolling) {
        await w.ask(`How long does the warranty last? (${++n})`, Date.now() + 60_000);
        await sleep(ASK_EVERY_MS);
      }
    });

    await sleep(3000);
    for (const [k, inst] of cluster.instances.entries()) {
      // An answer surely in flight at SIGTERM: a widget on this very instance asks just before it.
      const visitorId = `v_${randomUUID().replace(/-/g, '')}`;
      const direct = new Widget(inst.url, (await backendToken(lb.url, client, visitorId)).access_token, visitorId, `127.0.0.${30 + k}`);
      widgets.push(direct);
      await new Promise<void>((resolve) => {
        if (direct.socket.connected) resolve();
        else direct.socket.once('connect', () => resolve());
      });
      await direct.ask('How long does the warranty last? (asked at SIGTERM)', Date.now() + 30_000);
      const text = await (await fetch(`${inst.url}/metrics`)).text();
      assert.ok(Number(/^svc_answers_in_flight\s+(\d+)/m.exec(text)?.[1]) >= 1, `${inst.name} has an answer in flight when it gets SIGTERM`);
      const exit = await inst.stop('SIGTERM', 60_000);
      assert.equal(exit.code, 0, `${inst.name} exits 0 after its drain:\n${inst.output.slice(-2000)}`);
      await inst.start(120_000);
      await sleep(3000);
    }
    rolling = false;
    await Promise.all(load);

    // Every acknowledged question ends exactly once, as answer.done, for its visitor (resumed).
    const deadline = Date.now() + 60_000;
    const open = () => widgets.flatMap((w) => [...w.acked.values()].filter((id) => w.endsOf(id).length === 0));
    while (open().length > 0 && Date.now() < deadline) {
      // From 0: a live event may have overtaken a lost one (the widget would hold it and resume the gap).
      await Promise.all(widgets.map((w) => (w.socket.connected ? w.resume(0) : null)));
      await sleep(500);
    }
    const acked = widgets.reduce((a, w) => a + w.acked.size, 0);
    assert.ok(acked >= 30, `enough load through the roll: ${acked} questions acknowledged`);
    assert.deepEqual(open(), [], 'no acknowledged question lost');
    const get = api(lb.url, acct.key);
    for (const w of widgets) {
      assert.deepEqual(w.visibleErrors, [], 'nothing visible to the visitor');
      for (const responseId of w.acked.values()) {
        const ends = w.endsOf(responseId);
        assert.equal(ends.length, 1, `exactly one end for ${responseId}: ${JSON.stringify(ends)}`);
        assert.equal(ends[0]!.type, 'answer.done', `no failed answer: ${JSON.stringify(ends[0])}`);
        assert.equal((ends[0] as { answer: string }).answer, model.answer);
      }
      // Stored once each: the conversation's responses in the API are exactly the acknowledged ones.
      const ids: string[] = [];
      for (let page = 1; ; page++) {
        const listed = await get(`${V2}/response?conversation_id=${w.conversationId}&pageSize=100&page=${page}`);
        assert.equal(listed.status, 200, `list through nginx: ${listed.status}\n${lb.errorLog().slice(-1500)}`);
        const results = listed.body.results as Array<{ response_id: string }>;
        ids.push(...results.map((r) => r.response_id));
        if (results.length < 100) break;
      }
      ids.sort();
      assert.deepEqual(ids, [...w.acked.values()].sort(), 'one response record per acknowledged question, none other');
    }
    const reconnects = widgets.reduce((a, w) => a + w.connects - 1, 0);
    assert.ok(reconnects >= 3, `the widgets moved during the roll (${reconnects} reconnects)`);
    console.log(
      `rolling restart: ${acked} questions acknowledged, ${reconnects} reconnects, ${widgets.reduce((a, w) => a + w.retriedAsks, 0)} asks re-sent after 'unavailable' or a lost ack`,
    );
  });
});
