/**
 * A visitor's chat over the /widget socket with the built-in knowledge-base engine: sequenced,
 * streamed answers that land in the Customer API, idempotent retries, resume, feedback, and
 * visitors who can never reach each other's conversations.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { updateBotSettings } from '../../lib/bot/settings';
import type { ServerEvent } from '../../lib/chat/protocol';
import { getTranscript } from '../../lib/dashboard/service';
import { TS_RE, UUID_RE, V2 } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { addKnowledge, assertIncreasingSeq, backendToken, connectVisitor, createTestWidgetClient, eventually, type Visitor } from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

const ORIGIN = 'https://example.com';
const RETURNS =
  'You can return any gizmo within 30 days of delivery for a full refund. Pack the gizmo in its original box ' +
  'and print the prepaid return label from your account page.';
const FAQ =
  `# Shipping\n\nWe ship every order within two business days from our warehouse in Rotterdam. Express delivery costs 9 euros.\n\n` +
  `# Returns\n\n${RETURNS}\n`;

/** An account with an FAQ document, a widget client for example.com and a connected visitor. */
async function setup(opts: { faq?: boolean } = {}) {
  const acct = await createTestAccount();
  if (opts.faq !== false) await addKnowledge(acct.accountId, 'faq.md', FAQ);
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const issued = await backendToken(server.url, client);
  const visitor = await connectVisitor(server.url, issued.access_token, ORIGIN);
  return { acct, client, issued, visitor, get: api(server.url, acct.key) };
}

async function newVisitor(client: Awaited<ReturnType<typeof setup>>['client']) {
  const issued = await backendToken(server.url, client);
  return connectVisitor(server.url, issued.access_token, ORIGIN, 'polling');
}

type AskAck = { conversation_id: string; client_message_id: string; response_id: string; duplicate: boolean };

async function askAndWait(v: Visitor, payload: Record<string, unknown>) {
  const ack = await v.ok<AskAck>('ask', payload);
  const end = await v.finished(ack.response_id);
  return { ack, end, events: v.eventsOf(ack.response_id) };
}

describe('widget chat: a question answered from the knowledge base', () => {
  it('streams question, deltas and done with increasing seqs, and stores the response for the Customer API', async (t) => {
    const { client, visitor, get } = await setup();
    t.after(() => visitor.close());
    const question = 'How many days do I have to return a gizmo?';
    const { ack, end, events } = await askAndWait(visitor, { client_message_id: 'm-1', text: question });
    assert.match(ack.conversation_id, UUID_RE);
    assert.match(ack.response_id, UUID_RE);
    assert.equal(ack.duplicate, false);

    assert.deepEqual(
      events.map((e) => e.type).filter((x, i, a) => a.indexOf(x) === i),
      ['question', 'answer.delta', 'answer.done'],
    );
    assert.equal(events[0]!.type, 'question');
    assert.equal(events.at(-1)!.type, 'answer.done');
    const deltas = events.filter((e) => e.type === 'answer.delta');
    // The first word group leaves at once; what the engine produces meanwhile is coalesced (lib/answers/runner.ts).
    assert.ok(deltas.length >= 2, `the answer streams in more than one delta, got ${deltas.length}`);
    assertIncreasingSeq(events);
    // One visitor, one question: consecutive seqs from 1 (the last delta takes its seq in
    // answer.done's statement, lib/answers/runner.ts; no seq may be skipped by it).
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
    );
    for (const e of events) {
      assert.equal(e.conversation_id, ack.conversation_id);
      assert.equal((e as { client_message_id: string }).client_message_id, 'm-1');
    }
    const q = events[0] as Extract<ServerEvent, { type: 'question' }>;
    assert.equal(q.text, question);
    assert.deepEqual(q.attachments, []);

    assert.equal(end.type, 'answer.done');
    const done = end as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.equal(deltas.map((d) => (d as { text: string }).text).join(''), done.answer, 'the deltas add up to the answer');
    assert.ok(done.answer.includes('You can return any gizmo within 30 days of delivery'), done.answer);
    assert.ok(!done.answer.includes('faq.md'), 'the answer names the title, never the file');
    assert.deepEqual(
      done.sources.map((s) => s.title),
      ['Shipping'],
      "the one passage quoted, titled by the document's first heading",
    );
    assert.match(done.sources[0]!.document_id, UUID_RE);
    assert.ok(done.sources[0]!.passage.includes('30 days of delivery'));

    const list = await get(`${V2}/response?conversation_id=${ack.conversation_id}`);
    assert.equal(list.status, 200);
    assert.equal(list.body.count, 1);
    const record = list.body.results[0];
    assert.deepEqual(
      { ...record, created_at: undefined },
      {
        response_id: ack.response_id,
        id: ack.response_id,
        question,
        answer: done.answer,
        channel_id: client.channel_id,
        conversation_id: ack.conversation_id,
        created_at: undefined,
        likes: 0,
        dislikes: 0,
        comments: 0,
        declined: false,
      },
    );
    assert.match(record.created_at, TS_RE);
    const one = await get(`${V2}/response/${ack.response_id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.answer, done.answer);

    const conv = await get(`${V2}/conversation/${ack.conversation_id}`);
    assert.equal(conv.status, 200);
    assert.equal(conv.body.title, question);
    assert.equal(conv.body.status, 'Open');
    assert.equal(conv.body.channel_id, client.channel_id);
    assert.equal(conv.body.response_count, 1);
    assert.equal(typeof conv.body.channel_name, 'string');
    assert.deepEqual(
      conv.body.messages.map((m: Record<string, unknown>) => [m.role, m.content, m.response_id, m.attachments]),
      [
        ['user', question, ack.response_id, []],
        ['assistant', done.answer, ack.response_id, []],
      ],
    );
    const inList = await get(`${V2}/conversation?channel_id=${client.channel_id}`);
    assert.deepEqual(
      inList.body.results.map((c: { id: string }) => c.id),
      [ack.conversation_id],
    );
  });

  it('continues the conversation: seqs keep increasing, the title stays, history lists every message', async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const first = await askAndWait(visitor, { client_message_id: 'a', text: 'How do I return a gizmo?' });
    const second = await askAndWait(visitor, {
      conversation_id: first.ack.conversation_id,
      client_message_id: 'b',
      text: 'Where is your warehouse for shipping?',
    });
    assert.equal(second.ack.conversation_id, first.ack.conversation_id);
    assert.notEqual(second.ack.response_id, first.ack.response_id);
    assertIncreasingSeq([...first.events, ...second.events]);
    assert.ok((second.end as { answer: string }).answer.includes('Rotterdam'));

    const conv = await get(`${V2}/conversation/${first.ack.conversation_id}`);
    assert.equal(conv.body.title, 'How do I return a gizmo?');
    assert.equal(conv.body.response_count, 2);
    assert.deepEqual(
      conv.body.messages.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'user', 'assistant'],
    );

    const hist = await visitor.ok<{ messages: Array<Record<string, unknown>>; last_seq: number }>('history', { conversation_id: first.ack.conversation_id });
    assert.deepEqual(
      hist.messages.map((m) => [m.role, m.response_id]),
      [
        ['user', first.ack.response_id],
        ['assistant', first.ack.response_id],
        ['user', second.ack.response_id],
        ['assistant', second.ack.response_id],
      ],
    );
    assert.equal(hist.messages[1]!.content, (first.end as { answer: string }).answer);
    assert.equal(hist.last_seq, second.end.seq);
  });

  it("answers honestly when nothing in the knowledge base matches, never from another account's documents", async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const other = await createTestAccount('Other Co');
    await addKnowledge(other.accountId, 'payments.md', '# Payments\n\nYou can pay with seashells on Mars at the Olympus Mons branch.\n');
    const { ack, end } = await askAndWait(visitor, { client_message_id: 'n', text: 'Can I pay with seashells on Mars?' });
    assert.equal(end.type, 'answer.done');
    const done = end as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.match(done.answer, /couldn.t find/i);
    assert.deepEqual(done.sources, []);
    assert.ok(!done.answer.includes('gizmo'));
    assert.ok(!done.answer.includes('Olympus'));
    const stored = await get(`${V2}/response/${ack.response_id}`);
    assert.equal(stored.body.answer, done.answer);
  });

  it('titles a conversation with its first question, shortened to at most 80 characters', async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const question = `How do I return a gizmo that arrived broken, ${'and with a very long explanation of what happened '.repeat(4)}?`;
    const { ack } = await askAndWait(visitor, { client_message_id: 'long', text: `  ${question}\n` });
    const conv = await get(`${V2}/conversation/${ack.conversation_id}`);
    assert.ok(conv.body.title.length <= 80, conv.body.title);
    assert.ok(conv.body.title.startsWith('How do I return a gizmo that arrived broken,'), conv.body.title);
    assert.ok(!/\s/.test(conv.body.title.at(-1)), 'no trailing space');
    assert.equal(conv.body.messages[0].content.trim(), question);
  });

  it('refuses malformed requests with invalid_request and stores nothing', async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const cases: Array<[string, unknown]> = [
      ['ask', { client_message_id: 'x', text: '' }],
      ['ask', { client_message_id: 'x', text: '   ' }],
      ['ask', { client_message_id: 'x', text: 'a'.repeat(4001) }],
      ['ask', { client_message_id: '', text: 'hello' }],
      ['ask', { client_message_id: 'has space', text: 'hello' }],
      ['ask', { text: 'hello' }],
      ['ask', { client_message_id: 'x', text: 'hello', conversation_id: 'not-a-uuid' }],
      ['ask', { client_message_id: 'x', text: 'hello', attachments: ['nope'] }],
      ['ask', 'hello'],
      ['ask', null],
      ['conversation:resume', { conversation_id: 'nope', last_seq: 0 }],
      ['conversation:resume', { conversation_id: '00000000-0000-4000-8000-000000000000', last_seq: -1 }],
      ['history', {}],
      ['feedback', { response_id: '00000000-0000-4000-8000-000000000000', value: 'love' }],
      ['comment', { response_id: '00000000-0000-4000-8000-000000000000', text: '' }],
    ];
    for (const [name, payload] of cases) {
      const ack = await visitor.request(name, payload);
      assert.equal(ack.ok, false, `${name} ${JSON.stringify(payload)}`);
      assert.equal((ack as { error: { code: string } }).error.code, 'invalid_request', `${name} ${JSON.stringify(payload)}: ${JSON.stringify(ack)}`);
    }
    assert.equal((await get(`${V2}/response`)).body.count, 0);
    assert.equal((await get(`${V2}/conversation`)).body.count, 0);
    assert.deepEqual(visitor.events, []);
  });
});

describe('widget chat: the account turned "show sources" off', () => {
  it('visitors get no sources (live, resume, history); the stored response keeps them for the account', async (t) => {
    const { acct, issued, visitor, get } = await setup();
    t.after(() => visitor.close());
    await updateBotSettings(CLI, acct.accountId, { instructions: '', noAnswerText: '', model: '', showSources: false });
    const { ack, end } = await askAndWait(visitor, { client_message_id: 's1', text: 'How do I return a gizmo?' });
    const done = end as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.equal(done.type, 'answer.done');
    assert.ok(done.answer.includes('30 days of delivery') && !done.answer.includes('From **'), done.answer);
    assert.deepEqual(done.sources, [], 'live answer.done');

    const back = await connectVisitor(server.url, issued.access_token, ORIGIN, 'polling');
    t.after(() => back.close());
    await back.ok('conversation:resume', { conversation_id: ack.conversation_id, last_seq: 0 });
    await back.until(() => back.events.some((e) => e.type === 'answer.done'), 'the replayed answer.done');
    assert.deepEqual((back.events.find((e) => e.type === 'answer.done') as typeof done).sources, [], 'resume');
    const hist = await back.ok<{ messages: Array<{ role: string; sources: unknown[] }> }>('history', { conversation_id: ack.conversation_id });
    assert.deepEqual(
      hist.messages.map((m) => m.sources),
      [[], []],
      'history',
    );

    // The account's own record: the dashboard transcript shows what the answer was based on; the
    // Customer API response record has no sources field at all (docs/contracts.md §4).
    const transcript = await getTranscript(acct.accountId, ack.conversation_id);
    assert.deepEqual(
      transcript!.messages[1]!.sources.map((s) => s.title),
      ['Shipping'],
      'the document title (its first heading)',
    );
    const record = await get(`${V2}/response/${ack.response_id}`);
    assert.equal(record.status, 200);
    assert.equal('sources' in record.body, false);

    // Turned back on: what visitors see follows the account's current setting, for earlier answers too.
    await updateBotSettings(CLI, acct.accountId, { instructions: '', noAnswerText: '', model: '', showSources: true });
    const again = await back.ok<{ messages: Array<{ role: string; sources: Array<{ title: string }> }> }>('history', { conversation_id: ack.conversation_id });
    assert.deepEqual(
      again.messages[1]!.sources.map((s) => s.title),
      ['Shipping'],
    );
  });
});

describe('widget chat: retries with the same client_message_id', () => {
  it('stores one response when a question is retried at once, after done, and from a new connection', async (t) => {
    const { issued, visitor, get } = await setup();
    t.after(() => visitor.close());
    const first = await visitor.ok<AskAck>('ask', { client_message_id: 'retry-1', text: 'How do I return a gizmo?' });
    const again = { conversation_id: first.conversation_id, client_message_id: 'retry-1', text: 'How do I return a gizmo?' };
    const atOnce = await visitor.ok<AskAck>('ask', again);
    assert.equal(atOnce.response_id, first.response_id);
    assert.equal(atOnce.duplicate, true);
    await visitor.finished(first.response_id);
    const afterDone = await visitor.ok<AskAck>('ask', again);
    assert.equal(afterDone.response_id, first.response_id);
    assert.equal(afterDone.duplicate, true);

    const reconnected = await connectVisitor(server.url, issued.access_token, ORIGIN, 'polling');
    t.after(() => reconnected.close());
    const fromNewSocket = await reconnected.ok<AskAck>('ask', again);
    assert.equal(fromNewSocket.response_id, first.response_id);
    assert.equal(fromNewSocket.duplicate, true);

    await new Promise((r) => setTimeout(r, 200));
    const list = await get(`${V2}/response`);
    assert.equal(list.body.count, 1);
    assert.equal((await get(`${V2}/conversation/${first.conversation_id}`)).body.response_count, 1);
    assert.equal(visitor.events.filter((e) => e.type === 'question').length, 1, 'one question event');
    assert.equal(visitor.events.filter((e) => e.type === 'answer.done').length, 1, 'one answer');
  });

  it('stores one conversation and one response when the very first question is retried as sent (its ack was lost)', async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const payload = { client_message_id: 'first-question', text: 'How do I return a gizmo?' };
    const a = await visitor.ok<AskAck>('ask', payload);
    const b = await visitor.ok<AskAck>('ask', payload);
    await visitor.finished(a.response_id);
    // Give a wrongly started second answer the time to be stored, so the count below is final.
    if (b.response_id !== a.response_id) {
      await eventually(
        () => get(`${V2}/response`),
        (r) => r.body.count >= 2,
        'the duplicate to be stored',
        3000,
      ).catch(() => {});
    }
    assert.equal((await get(`${V2}/response`)).body.count, 1, 'one response');
    assert.equal((await get(`${V2}/conversation`)).body.count, 1, 'one conversation');
    assert.equal(b.conversation_id, a.conversation_id);
    assert.equal(b.response_id, a.response_id);
    assert.equal(b.duplicate, true);
  });
});

describe('widget chat: one connection, several conversations', () => {
  it("delivers every event of each conversation the connection follows, whatever the other's seq", async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const a1 = await askAndWait(visitor, { client_message_id: 'a1', text: 'How do I return a gizmo?' });
    const convA = a1.ack.conversation_id;
    await askAndWait(visitor, { conversation_id: convA, client_message_id: 'a2', text: 'Where is your warehouse for shipping?' });
    // A new conversation on the same connection, while A is further along in its seqs.
    const b1 = await askAndWait(visitor, { client_message_id: 'b1', text: 'How much does express delivery cost?' });
    const convB = b1.ack.conversation_id;
    assert.notEqual(convB, convA);
    assert.equal(b1.end.type, 'answer.done');
    // The widget reopens A's history, then the visitor goes on in B.
    await visitor.ok('history', { conversation_id: convA });
    const b2ack = await visitor.ok<AskAck>('ask', { conversation_id: convB, client_message_id: 'b2', text: 'Can I return a gizmo without its box?' });
    const b2end = await visitor.finished(b2ack.response_id, 5000);
    assert.equal(b2end.type, 'answer.done');
    // Both conversations at once.
    const [x, y] = await Promise.all([
      visitor.ok<AskAck>('ask', { conversation_id: convA, client_message_id: 'a3', text: 'How do I return a gizmo?' }),
      visitor.ok<AskAck>('ask', { conversation_id: convB, client_message_id: 'b3', text: 'Where do you ship from?' }),
    ]);
    await visitor.finished(x.response_id, 5000);
    await visitor.finished(y.response_id, 5000);
    for (const conv of [convA, convB]) {
      const own = visitor.events.filter((e) => e.conversation_id === conv);
      assertIncreasingSeq(own);
      const stored = await get(`${V2}/response?conversation_id=${conv}`);
      const done = own
        .filter((e) => e.type === 'answer.done')
        .map((e) => (e as { response_id: string }).response_id)
        .sort();
      assert.deepEqual(done, stored.body.results.map((r: { id: string }) => r.id).sort(), `every stored answer of ${conv} reached the visitor`);
    }
  });
});

describe('widget chat: resume', () => {
  it('after a reconnect, resume delivers exactly the events after last_seq, like a client that never left', async (t) => {
    const { issued, visitor, get } = await setup();
    t.after(() => visitor.close());
    const { ack, events } = await askAndWait(visitor, { client_message_id: 'r1', text: 'How do I return a gizmo?' });
    assert.ok(events.length >= 4);
    const cut = events[1]!.seq;
    visitor.close();

    const back = await connectVisitor(server.url, issued.access_token, ORIGIN, 'polling');
    t.after(() => back.close());
    const resumed = await back.ok<{ last_seq: number; conversation_id: string }>('conversation:resume', {
      conversation_id: ack.conversation_id,
      last_seq: cut,
    });
    assert.equal(resumed.last_seq, events.at(-1)!.seq);
    await back.until(() => back.events.some((e) => e.type === 'answer.done'), 'the replayed answer.done');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      back.events.map((e) => e.seq),
      events.filter((e) => e.seq > cut).map((e) => e.seq),
    );
    assert.deepEqual(
      back.events,
      events.filter((e) => e.seq > cut),
    );

    // Live events follow the replay on the same subscription, exactly once.
    const next = await askAndWait(back, { conversation_id: ack.conversation_id, client_message_id: 'r2', text: 'Where do you ship from?' });
    assertIncreasingSeq(back.events);
    assert.equal(new Set(back.events.map((e) => e.seq)).size, back.events.length, 'no seq twice');
    assert.equal(next.events[0]!.type, 'question');
    assert.equal((await get(`${V2}/conversation/${ack.conversation_id}`)).body.response_count, 2);
  });

  it('a resume with the latest seq replays nothing', async (t) => {
    const { issued, visitor } = await setup();
    t.after(() => visitor.close());
    const { ack, end } = await askAndWait(visitor, { client_message_id: 'r1', text: 'How do I return a gizmo?' });
    const other = await connectVisitor(server.url, issued.access_token, ORIGIN);
    t.after(() => other.close());
    const r = await other.ok<{ last_seq: number }>('conversation:resume', { conversation_id: ack.conversation_id, last_seq: end.seq });
    assert.equal(r.last_seq, end.seq);
    await new Promise((res) => setTimeout(res, 150));
    assert.deepEqual(other.events, []);
  });
});

describe('widget chat: feedback and comments', () => {
  it('likes and dislikes toggle, comments count, and the Customer API shows the counts', async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const { ack } = await askAndWait(visitor, { client_message_id: 'f', text: 'How do I return a gizmo?' });
    const rid = ack.response_id;
    const counts = async () => {
      const r = await get(`${V2}/response/${rid}`);
      return [r.body.likes, r.body.dislikes, r.body.comments];
    };
    const steps: Array<[string, unknown, { likes: number; dislikes: number; mine?: string | null }, number[]]> = [
      ['feedback', { response_id: rid, value: 'like' }, { likes: 1, dislikes: 0, mine: 'like' }, [1, 0, 0]],
      ['feedback', { response_id: rid, value: 'like' }, { likes: 0, dislikes: 0, mine: null }, [0, 0, 0]],
      ['feedback', { response_id: rid, value: 'dislike' }, { likes: 0, dislikes: 1, mine: 'dislike' }, [0, 1, 0]],
      ['feedback', { response_id: rid, value: 'like' }, { likes: 1, dislikes: 0, mine: 'like' }, [1, 0, 0]],
      ['feedback', { response_id: rid, value: 'dislike' }, { likes: 0, dislikes: 1, mine: 'dislike' }, [0, 1, 0]],
      ['feedback', { response_id: rid, value: 'dislike' }, { likes: 0, dislikes: 0, mine: null }, [0, 0, 0]],
      ['feedback', { response_id: rid, value: 'like' }, { likes: 1, dislikes: 0, mine: 'like' }, [1, 0, 0]],
    ];
    for (const [name, payload, want, api] of steps) {
      const res = await visitor.ok<{ likes: number; dislikes: number; mine: string | null }>(name, payload);
      assert.deepEqual({ likes: res.likes, dislikes: res.dislikes, mine: res.mine }, want, JSON.stringify(payload));
      assert.deepEqual(await counts(), api);
    }
    const c1 = await visitor.ok<{ comments: number; comment_id: string }>('comment', { response_id: rid, text: 'Very helpful, thanks!' });
    assert.equal(c1.comments, 1);
    assert.deepEqual(await counts(), [1, 0, 1]);
    const c2 = await visitor.ok<{ comments: number }>('comment', { response_id: rid, text: 'Actually, one more thing.' });
    assert.equal(c2.comments, 2);
    assert.deepEqual(await counts(), [1, 0, 2]);

    const pushed = visitor.events.filter((e) => e.type === 'feedback' || e.type === 'comment');
    assert.equal(pushed.length, steps.length + 2);
    assertIncreasingSeq(visitor.events);
    assert.deepEqual(pushed.at(-1), { ...pushed.at(-1), type: 'comment', response_id: rid, comments: 2 });
    const hist = await visitor.ok<{ messages: Array<{ mine: string | null; likes: number }> }>('history', { conversation_id: ack.conversation_id });
    assert.equal(hist.messages[1]!.mine, 'like');
    assert.equal(hist.messages[1]!.likes, 1);
  });

  it("two visitors' likes add up on the same answer only through their own conversations", async (t) => {
    const { client, visitor, get } = await setup();
    t.after(() => visitor.close());
    const { ack } = await askAndWait(visitor, { client_message_id: 'f', text: 'How do I return a gizmo?' });
    await visitor.ok('feedback', { response_id: ack.response_id, value: 'dislike' });
    const stranger = await newVisitor(client);
    t.after(() => stranger.close());
    const ack2 = await stranger.request('feedback', { response_id: ack.response_id, value: 'dislike' });
    assert.equal(ack2.ok, false);
    assert.equal((await get(`${V2}/response/${ack.response_id}`)).body.dislikes, 1);
  });
});

describe('widget chat: visitors are isolated', () => {
  it("another visitor gets not_found for someone else's conversation and answer, and sees nothing", async (t) => {
    const { client, visitor, get } = await setup();
    t.after(() => visitor.close());
    const { ack, end } = await askAndWait(visitor, { client_message_id: 'secret', text: 'How do I return a gizmo?' });
    const conv = ack.conversation_id;
    const rid = ack.response_id;

    const sameAccount = await newVisitor(client);
    t.after(() => sameAccount.close());
    const otherAcct = await createTestAccount('Other Co');
    await addKnowledge(otherAcct.accountId, 'faq.md', FAQ);
    const otherClient = await createTestWidgetClient(otherAcct.accountId, ['example.com']);
    const otherAccount = await connectVisitor(server.url, (await backendToken(server.url, otherClient)).access_token, ORIGIN);
    t.after(() => otherAccount.close());

    for (const intruder of [sameAccount, otherAccount]) {
      const attempts: Array<[string, unknown]> = [
        ['conversation:resume', { conversation_id: conv, last_seq: 0 }],
        ['history', { conversation_id: conv }],
        ['ask', { conversation_id: conv, client_message_id: 'intrude', text: 'How do I return a gizmo?' }],
        ['ask', { conversation_id: conv, client_message_id: 'secret', text: 'How do I return a gizmo?' }],
        ['feedback', { response_id: rid, value: 'like' }],
        ['feedback', { response_id: rid, value: 'dislike' }],
        ['comment', { response_id: rid, text: 'I was here' }],
      ];
      for (const [name, payload] of attempts) {
        const res = await intruder.request(name, payload);
        assert.equal(res.ok, false, `${name} must fail: ${JSON.stringify(res)}`);
        const { error } = res as { error: { code: string; message: string } };
        assert.equal(error.code, 'not_found', `${name}: ${JSON.stringify(res)}`);
        assert.ok(!JSON.stringify(res).includes('gizmo'), 'the error reveals nothing');
      }
    }
    // The owner keeps talking; the intruders receive none of it.
    await askAndWait(visitor, { conversation_id: conv, client_message_id: 'secret-2', text: 'Where do you ship from?' });
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(sameAccount.events, []);
    assert.deepEqual(otherAccount.events, []);

    const record = await get(`${V2}/response/${rid}`);
    assert.deepEqual([record.body.likes, record.body.dislikes, record.body.comments, record.body.answer], [0, 0, 0, (end as { answer: string }).answer]);
    assert.equal((await get(`${V2}/conversation/${conv}`)).body.response_count, 2);
    assert.equal((await get(`${V2}/response`)).body.count, 2, 'the intruders stored nothing in the account');
    const otherApi = api(server.url, otherAcct.key);
    assert.equal((await otherApi(`${V2}/response`)).body.count, 0);
    assert.equal((await otherApi(`${V2}/conversation/${conv}`)).status, 404);
  });
});
