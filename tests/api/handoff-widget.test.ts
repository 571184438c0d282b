/**
 * The visitor's side of human handoff over the /widget socket (docs/contracts.md §14,
 * docs/widget-protocol.md): "Talk to a person", asking for one in words, a member's actions
 * through the core service reaching the visitor as events, the visitor's messages stored for the
 * member (never answered by the AI, idempotent), resume and history after a reconnect, the rating,
 * the away mode, a 2.0.x widget's translated events, and a table of bad input.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { getDb } from '../../db/client';
import { insertQuestion } from '../../db/queries/chat';
import { createAdminUser } from '../../lib/accounts/service';
import { HANDED_OVER } from '../../lib/answers/runner';
import type { HistoryMessage, ServerEvent } from '../../lib/chat/protocol';
import { handBack, memberTyping, replyAsMember, resolveConversation, takeOver } from '../../lib/conversations/handoff';
import { saveHandoffSettings, touchDashboard } from '../../lib/conversations/availability';
import { DEFAULT_HANDOFF_SETTINGS } from '../../lib/conversations/handoff-contract';
import { UUID_RE } from '../helpers/api-fixtures';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import {
  addKnowledge,
  backendToken,
  connectOutcome,
  connectVisitor,
  createTestWidgetClient,
  Visitor,
  widgetSocket,
  type WidgetClient,
} from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    // Short leases: an answer whose instance died is taken over within a second or two (the take-over test).
    server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000', CHAT_ANSWER_LEASE_SECONDS: '3' });
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
const FAQ = '# Returns\n\nYou can return any tent within 30 days of delivery for a full refund. Pack it in its original bag.\n';
const UNRELATED = 'Do you sell purple kayak paddles for penguins?';

type AskAck = { conversation_id: string; client_message_id: string; response_id: string; duplicate: boolean; handled_by?: 'ai' | 'human' };
type Member = { accountId: number; userId: number; role: 'admin' };

/** An account with an FAQ, a widget client, a member online (Dana Reyes) and a connected visitor. */
async function setup(opts: { online?: boolean } = {}) {
  const acct = await createTestAccount();
  await addKnowledge(acct.accountId, 'faq.md', FAQ);
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const user = await createAdminUser(CLI, {
    accountId: acct.accountId,
    email: `dana-${acct.accountId}@example.test`,
    password: 'dana-password-12',
    name: 'Dana Reyes',
  });
  const member: Member = { accountId: acct.accountId, userId: user.user_id, role: 'admin' };
  if (opts.online !== false) await touchDashboard(member);
  const issued = await backendToken(server.url, client);
  const visitor = await connectVisitor(server.url, issued.access_token, ORIGIN);
  return { acct, client, issued, member, visitor };
}

const ofType = <T extends ServerEvent['type']>(v: Visitor, type: T) => v.events.filter((e): e is Extract<ServerEvent, { type: T }> => e.type === type);
const waitFor = async <T extends ServerEvent['type']>(v: Visitor, type: T, count = 1) => {
  await v.until(() => ofType(v, type).length >= count, `${count} ${type} event(s)`);
  return ofType(v, type)[count - 1]!;
};

/** A first question the AI declines, answered: the conversation exists, handled by the AI. */
async function declinedConversation(v: Visitor): Promise<string> {
  const ack = await v.ok<AskAck>('ask', { client_message_id: 'first', text: UNRELATED });
  const done = await v.finished(ack.response_id);
  assert.equal(done.type, 'answer.done');
  assert.equal((done as Extract<ServerEvent, { type: 'answer.done' }>).declined, true, 'a declined answer says so (the widget offers a person)');
  return ack.conversation_id;
}

describe('handoff over the widget socket', () => {
  it('session says handoff is on; "Talk to a person" waits for the team, idempotently', async (t) => {
    const { visitor, member } = await setup();
    t.after(() => visitor.close());
    assert.deepEqual(visitor.session?.handoff, { enabled: true });
    const id = await declinedConversation(visitor);

    const first = await visitor.ok('handoff:request', { conversation_id: id });
    assert.deepEqual(
      { ...first, ok: undefined },
      { ok: undefined, conversation_id: id, status: 'Waiting', handled_by: 'human', available: true, expected_wait_seconds: null, away: null },
    );
    const waiting = await waitFor(visitor, 'handoff.waiting');
    assert.equal(waiting.expected_wait_seconds, null);
    assert.deepEqual(
      ofType(visitor, 'status').map((e) => [e.status, e.handled_by]),
      [['Waiting', 'human']],
    );
    const eventsBefore = visitor.events.length;
    const again = await visitor.ok('handoff:request', { conversation_id: id });
    assert.equal(again.status, 'Waiting');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(visitor.events.length, eventsBefore, 'asking again changes nothing and sends nothing');

    await takeOver(member, { conversation_id: id });
    assert.equal((await waitFor(visitor, 'agent.joined')).name, 'Dana Reyes');
  });

  it("a member's typing and reply reach the visitor; the visitor's messages go to the member, never to the AI, once per client_message_id", async (t) => {
    const { visitor, member } = await setup();
    t.after(() => visitor.close());
    const id = await declinedConversation(visitor);
    await takeOver(member, { conversation_id: id });
    await waitFor(visitor, 'agent.joined');
    await memberTyping(member, { conversation_id: id });
    assert.equal((await waitFor(visitor, 'agent.typing')).name, 'Dana Reyes');
    const reply = await replyAsMember(member, { conversation_id: id, text: 'Hi, Dana here. How can I help?' });
    const msg = await waitFor(visitor, 'agent.message');
    assert.deepEqual(
      { ...msg, seq: 0, created_at: '' },
      {
        type: 'agent.message',
        conversation_id: id,
        seq: 0,
        message_id: reply.message.id,
        name: 'Dana Reyes',
        text: 'Hi, Dana here. How can I help?',
        created_at: '',
      },
    );

    const questionsBefore = ofType(visitor, 'question').length;
    const ack = await visitor.ok<AskAck>('ask', { conversation_id: id, client_message_id: 'to-dana-1', text: 'Where is my tent?' });
    assert.equal(ack.handled_by, 'human');
    assert.equal(ack.duplicate, false);
    assert.match(ack.response_id, UUID_RE);
    const stored = await waitFor(visitor, 'visitor.message');
    assert.deepEqual([stored.message_id, stored.client_message_id, stored.text], [ack.response_id, 'to-dana-1', 'Where is my tent?']);
    // A retry (the acknowledgement was lost) stores nothing new.
    const retry = await visitor.ok<AskAck>('ask', { conversation_id: id, client_message_id: 'to-dana-1', text: 'Where is my tent?' });
    assert.deepEqual([retry.response_id, retry.duplicate, retry.handled_by], [ack.response_id, true, 'human']);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(ofType(visitor, 'visitor.message').length, 1);
    assert.equal(ofType(visitor, 'question').length, questionsBefore, 'no question for the AI');
    assert.equal(ofType(visitor, 'answer.done').length, 1, 'the AI answered only the first question');
    const seen = await visitor.ok('messages:seen', { conversation_id: id, message_ids: [reply.message.id] });
    assert.equal(seen.seen, 1);

    // Hand back: the AI answers again.
    await handBack(member, { conversation_id: id });
    assert.equal((await waitFor(visitor, 'agent.left')).name, 'Dana Reyes');
    const back = await visitor.ok<AskAck>('ask', { conversation_id: id, client_message_id: 'after', text: 'How long do I have to return a tent?' });
    assert.notEqual(back.handled_by, 'human');
    const done = await visitor.finished(back.response_id);
    assert.match((done as Extract<ServerEvent, { type: 'answer.done' }>).answer, /30 days/);
  });

  it('an answer still in flight when a member takes over ends as an error, never as the AI speaking after "joined"', async (t) => {
    const { visitor, member, client } = await setup();
    t.after(() => visitor.close());
    const id = await declinedConversation(visitor);
    // A question whose instance died mid-answer: its lease lapses and a survivor (this server) answers it again.
    const responseId = randomUUID();
    const job = {
      question: 'How long do I have to return a tent?',
      channel_id: client.channel_id,
      question_message_id: randomUUID(),
      answer_message_id: randomUUID(),
    };
    const payload = { type: 'question', conversation_id: id, client_message_id: 'orphan', response_id: responseId, text: job.question, attachments: [] };
    const stored = await insertQuestion(await getDb(), member.accountId, {
      conversationId: id,
      responseId,
      clientMessageId: 'orphan',
      owner: 'gone',
      leaseSeconds: 2,
      job,
      payload,
    });
    assert.ok(stored.seq);
    await takeOver(member, { conversation_id: id });
    const end = await visitor.finished(responseId, 15_000);
    assert.deepEqual([end.type, (end as { message?: string }).message], ['answer.error', HANDED_OVER]);
    const joined = ofType(visitor, 'agent.joined')[0]!;
    assert.ok(joined.seq < end.seq);
  });

  it('asking for a person in words starts the handoff instead of an answer', async (t) => {
    const { visitor } = await setup();
    t.after(() => visitor.close());
    const ack = await visitor.ok<AskAck>('ask', { client_message_id: 'human-please', text: 'Can I speak to a human please?' });
    assert.equal(ack.handled_by, 'human');
    await waitFor(visitor, 'handoff.waiting');
    const stored = await waitFor(visitor, 'visitor.message');
    assert.equal(stored.text, 'Can I speak to a human please?');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(ofType(visitor, 'answer.done').length + ofType(visitor, 'question').length, 0, 'the AI never ran');
  });

  it('resume after a reconnect gets the member messages; history names their author', async (t) => {
    const { visitor, member, client } = await setup();
    t.after(() => visitor.close());
    const id = await declinedConversation(visitor);
    const lastSeq = visitor.events.at(-1)!.seq;
    visitor.close();
    await takeOver(member, { conversation_id: id });
    const reply = await replyAsMember(member, { conversation_id: id, text: 'Back in a minute with your tracking number.' });

    const issued = await backendToken(server.url, client, visitor.session!.visitor_id);
    const again = await connectVisitor(server.url, issued.access_token, ORIGIN);
    t.after(() => again.close());
    const r = await again.ok('conversation:resume', { conversation_id: id, last_seq: lastSeq });
    assert.equal(r.more, false);
    assert.deepEqual(
      again.events.map((e) => e.type),
      ['status', 'agent.joined', 'agent.message'],
    );
    assert.deepEqual(
      again.events.map((e) => e.seq),
      [lastSeq + 1, lastSeq + 2, lastSeq + 3],
    );
    const h = await again.ok<{ messages: HistoryMessage[]; status: string; handled_by: string }>('history', { conversation_id: id });
    assert.deepEqual([h.status, h.handled_by], ['Open', 'human']);
    const authors = h.messages.map((m) => [m.author, m.author_name, m.role]);
    assert.deepEqual(authors.slice(0, 2), [
      ['visitor', null, 'user'],
      ['ai', null, 'assistant'],
    ]);
    const mine = h.messages.find((m) => m.message_id === reply.message.id);
    assert.deepEqual(
      [mine?.author, mine?.author_name, mine?.content, mine?.role],
      ['agent', 'Dana Reyes', 'Back in a minute with your tracking number.', 'assistant'],
    );
    assert.equal(h.messages[1]!.declined, true);
  });

  it('after Resolve the visitor rates once; a rating before Resolve is refused', async (t) => {
    const { visitor, member } = await setup();
    t.after(() => visitor.close());
    const id = await declinedConversation(visitor);
    const early = await visitor.request('rating', { conversation_id: id, rating: 4 });
    assert.equal(early.ok, false);
    await takeOver(member, { conversation_id: id });
    await resolveConversation(member, { conversation_id: id });
    await waitFor(visitor, 'conversation.resolved');
    const rated = await visitor.ok('rating', { conversation_id: id, rating: 4, comment: 'Quick and kind.' });
    assert.deepEqual([rated.conversation_id, rated.rating], [id, 4]);
    const twice = await visitor.request('rating', { conversation_id: id, rating: 5 });
    assert.deepEqual(twice.ok ? null : twice.error.code, 'conflict');
  });

  it('with nobody online the visitor is told the team is away and can leave an email', async (t) => {
    const { visitor, member } = await setup({ online: false });
    t.after(() => visitor.close());
    await saveHandoffSettings(CLI, member, { ...DEFAULT_HANDOFF_SETTINGS, away_text: 'We answer within a day.' });
    const id = await declinedConversation(visitor);
    const ack = await visitor.ok('handoff:request', { conversation_id: id });
    assert.equal(ack.available, false);
    assert.deepEqual(ack.away, { until: null, text: 'We answer within a day.' });
    const away = await waitFor(visitor, 'handoff.away');
    assert.deepEqual([away.until, away.text], [null, 'We answer within a day.']);
    assert.equal(ofType(visitor, 'handoff.waiting').length, 0, 'never a promise of a person');
    const saved = await visitor.ok('visitor:email', { conversation_id: id, email: 'visitor@example.org' });
    assert.equal(saved.email, 'visitor@example.org');
  });

  it('with handoff off: the session says so, the button is refused, and asking in words gets the AI', async (t) => {
    const { visitor, member, client } = await setup();
    t.after(() => visitor.close());
    await saveHandoffSettings(CLI, member, { ...DEFAULT_HANDOFF_SETTINGS, enabled: false });
    const issued = await backendToken(server.url, client);
    const off = await connectVisitor(server.url, issued.access_token, ORIGIN);
    t.after(() => off.close());
    assert.deepEqual(off.session?.handoff, { enabled: false });
    const ack = await off.ok<AskAck>('ask', { client_message_id: 'words', text: 'Can I talk to a person?' });
    assert.notEqual(ack.handled_by, 'human');
    await off.finished(ack.response_id);
    const refused = await off.request('handoff:request', { conversation_id: ack.conversation_id });
    assert.equal(refused.ok, false);
    assert.equal((refused as { error: { code: string } }).error.code, 'forbidden');
  });
});

describe('a 2.0.x widget in a conversation a person takes over', () => {
  async function legacyVisitor(client: WidgetClient, visitorId?: string) {
    const issued = await backendToken(server.url, client, visitorId);
    const socket = widgetSocket(server.url, { origin: ORIGIN, auth: { token: issued.access_token, version: '2.0.4' } });
    const v = new Visitor(socket);
    assert.equal((await connectOutcome(socket)).connected, true);
    await v.until(() => v.session !== undefined, 'the session');
    return v;
  }

  it('gets member messages as answer deltas with their seq, stores its asks, and restores pairs from history', async (t) => {
    const { client, member, visitor } = await setup();
    visitor.close();
    const old = await legacyVisitor(client);
    t.after(() => old.close());
    const ack = await old.ok<AskAck>('ask', { client_message_id: 'q1', text: 'How long do I have to return a tent?' });
    const { answer } = (await old.finished(ack.response_id)) as Extract<ServerEvent, { type: 'answer.done' }>;
    const id = ack.conversation_id;
    await takeOver(member, { conversation_id: id });
    const reply = await replyAsMember(member, { conversation_id: id, text: 'Dana here: do you need a label?' });
    await old.until(() => old.events.some((e) => e.type === 'answer.delta' && e.response_id === reply.message.id), 'the translated reply');
    const delta = old.events.find((e) => e.type === 'answer.delta' && e.response_id === reply.message.id) as Extract<ServerEvent, { type: 'answer.delta' }>;
    assert.equal(delta.text, '**Dana Reyes:** Dana here: do you need a label?');
    const original = old.events.find((e) => e.type === 'agent.message');
    assert.equal(original?.seq, delta.seq, 'the original follows with the same seq (a 2.0 widget drops it)');
    assert.ok(old.events.indexOf(delta) < old.events.indexOf(original!), 'the translation arrives first');
    assert.ok(old.events.some((e) => e.type === 'answer.delta' && e.text === '_Dana Reyes joined_'));

    const mine = await old.ok<AskAck>('ask', { conversation_id: id, client_message_id: 'q2', text: 'Yes, a label please.' });
    await old.until(() => old.events.some((e) => e.type === 'question' && e.response_id === mine.response_id), 'its message as a question');

    const again = await legacyVisitor(client, old.session!.visitor_id);
    t.after(() => again.close());
    const h = await again.ok<{ messages: HistoryMessage[] }>('history', { conversation_id: id });
    assert.deepEqual(
      h.messages.map((m) => [m.role, m.content]),
      [
        ['user', 'How long do I have to return a tent?'],
        ['assistant', `${answer}\n\n_Dana Reyes joined_\n\n**Dana Reyes:** Dana here: do you need a label?`],
        ['user', 'Yes, a label please.'],
        ['assistant', '_Sent to the team_'],
      ],
    );
    await again.ok('conversation:resume', { conversation_id: id, last_seq: 0 });
    assert.ok(
      again.events.some((e) => e.type === 'answer.delta' && e.text === '**Dana Reyes:** Dana here: do you need a label?'),
      'resume translates too',
    );
    assert.ok(!again.events.some((e) => e.type === 'agent.message'), 'a resumed 2.0 widget gets only what it renders');
  });
});

describe('bad input on the handoff requests', () => {
  const cases: Array<[string, string, unknown, string, RegExp]> = [
    ['handoff:request without a conversation', 'handoff:request', {}, 'invalid_request', /conversation_id/],
    ['handoff:request with a bad id', 'handoff:request', { conversation_id: 'nope' }, 'invalid_request', /conversation_id: must be a conversation id/],
    ['rating 0', 'rating', { conversation_id: '00000000-0000-4000-8000-000000000000', rating: 0 }, 'invalid_request', /rating: must be from 1 to 5/],
    ['rating 6', 'rating', { conversation_id: '00000000-0000-4000-8000-000000000000', rating: 6 }, 'invalid_request', /rating: must be from 1 to 5/],
    ['rating 2.5', 'rating', { conversation_id: '00000000-0000-4000-8000-000000000000', rating: 2.5 }, 'invalid_request', /rating: must be a whole number/],
    ['rating as text', 'rating', { conversation_id: '00000000-0000-4000-8000-000000000000', rating: 'five' }, 'invalid_request', /rating/],
    [
      'a rating comment too long',
      'rating',
      { conversation_id: '00000000-0000-4000-8000-000000000000', rating: 3, comment: 'x'.repeat(2001) },
      'invalid_request',
      /comment: must be at most 2000/,
    ],
    [
      'an email that is not one',
      'visitor:email',
      { conversation_id: '00000000-0000-4000-8000-000000000000', email: 'nope' },
      'invalid_request',
      /email: must be an email/,
    ],
    [
      'seen ids that are not ids',
      'messages:seen',
      { conversation_id: '00000000-0000-4000-8000-000000000000', message_ids: ['x'] },
      'invalid_request',
      /message_ids/,
    ],
    [
      'a conversation that is not yours',
      'handoff:request',
      { conversation_id: '00000000-0000-4000-8000-000000000000' },
      'not_found',
      /No conversation of yours/,
    ],
    [
      'rating a conversation that is not yours',
      'rating',
      { conversation_id: '00000000-0000-4000-8000-000000000000', rating: 3 },
      'not_found',
      /No conversation of yours/,
    ],
    [
      'email on a conversation that is not yours',
      'visitor:email',
      { conversation_id: '00000000-0000-4000-8000-000000000000', email: 'a@b.co' },
      'not_found',
      /No conversation/,
    ],
  ];
  let visitor: Visitor;
  before(async () => {
    ({ visitor } = await setup());
  });
  after(() => visitor?.close());
  for (const [name, event, payload, code, message] of cases) {
    it(name, async () => {
      const ack = await visitor.request(event, payload);
      assert.equal(ack.ok, false, JSON.stringify(ack));
      const error = (ack as { error: { code: string; message: string } }).error;
      assert.equal(error.code, code, error.message);
      assert.match(error.message, message);
    });
  }

  it("another visitor's conversation is not found, whatever the request", async (t) => {
    const { visitor: a, client } = await setup();
    t.after(() => a.close());
    const id = await declinedConversation(a);
    const b = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, ORIGIN);
    t.after(() => b.close());
    for (const [event, payload] of [
      ['handoff:request', { conversation_id: id }],
      ['rating', { conversation_id: id, rating: 5 }],
      ['visitor:email', { conversation_id: id, email: 'a@b.co' }],
      ['messages:seen', { conversation_id: id }],
    ] as const) {
      const ack = await b.request(event, payload);
      assert.equal(ack.ok ? 'ok' : ack.error.code, 'not_found', event);
    }
  });
});
