/**
 * The members' `/inbox` namespace (docs/contracts.md §14, docs/decisions/inbox.md) through the real
 * server and database: who may connect, counts and views, live changes of the member's own
 * account only, typing, another account's conversation refused, and a removed member or an ended
 * session cut off at once.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createAdminUser } from '../../lib/accounts/service';
import { removeMember, setRequireTwoFactor, type Actor as TeamActor } from '../../lib/team/service';
import { changeMyPassword } from '../../lib/team/profile';
import { isOwnOrigin } from '../../lib/auth/origin';
import type { Role } from '../../lib/auth/roles';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { connectMember, inboxSocket, type InboxMember } from '../helpers/inbox';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn, signOut } from '../helpers/signin';
import { connectOutcome, sleep, TRANSPORTS } from '../helpers/widget';
import { waitingConversation, type Member as CoreMember } from '../helpers/handoff';
import { storeVisitorMessage } from '../../lib/conversations/handoff';
import { getLatestMessages, getTranscript } from '../../lib/dashboard/service';
import { INBOX_PAGE_SIZE, TRANSCRIPT_PAGE_SIZE } from '../../lib/dashboard/transcript-pages';
import { MAX_VISITOR_MESSAGES } from '../../lib/conversations/handoff-contract';
import { sql } from 'drizzle-orm';
import { getDb } from '../../db/client';

type Actor = CoreMember & { email: string; name: string };

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

const PASSWORD = 'member password 1';
type Member = { actor: Actor; cookie: string };

async function member(acct: TestAccount, role: Exclude<Role, 'owner'> = 'agent'): Promise<Member> {
  const email = `${role}-${randomUUID()}@example.test`;
  const name = `${role} ${email.slice(role.length + 1, role.length + 5)}`;
  const u = await createAdminUser(CLI, { accountId: acct.accountId, email, password: PASSWORD, role, name });
  const signed = await signIn(server.url, email, PASSWORD);
  assert.ok(signed.cookie, `signed in ${email}`);
  return { actor: { accountId: acct.accountId, userId: u.user_id, role, email, name }, cookie: signed.cookie };
}

const open: InboxMember[] = [];
async function connect(m: Member, transport: (typeof TRANSPORTS)[number] = 'websocket') {
  const s = await connectMember(server.url, m.cookie, transport);
  open.push(s);
  return s;
}
after(() => {
  for (const s of open) s.close();
});

describe('who may connect to /inbox', () => {
  const refused: Array<[string, () => Promise<string | null>]> = [
    ['no cookie', async () => null],
    ['a cookie that is not a session', async () => 'next-auth.session-token=not-a-jwt'],
    ['an empty session cookie', async () => 'next-auth.session-token='],
    [
      'a signed-out session',
      async () => {
        const acct = await createTestAccount();
        const signed = await signIn(server.url, acct.email, acct.password);
        await signOut(server.url, signed.cookie!);
        return signed.cookie;
      },
    ],
  ];
  for (const transport of TRANSPORTS) {
    for (const [what, cookie] of refused) {
      it(`refuses ${what} (${transport}) with code unauthenticated`, async () => {
        const socket = inboxSocket(server.url, await cookie(), transport);
        try {
          const outcome = await connectOutcome(socket);
          assert.equal(outcome.connected, false);
          assert.equal((outcome as { code?: string }).code, 'unauthenticated');
          assert.match((outcome as { message: string }).message, /sign in/);
        } finally {
          socket.close();
        }
      });
    }
    it(`accepts a signed-in agent (${transport})`, async () => {
      const acct = await createTestAccount();
      const agent = await member(acct, 'agent');
      const s = await connect(agent, transport);
      const list = await s.ok<{ counts: Record<string, number> }>('inbox:list', { view: 'waiting' });
      assert.deepEqual(Object.keys(list.counts).sort(), ['all_open', 'mine', 'resolved', 'unassigned', 'waiting']);
    });
  }
});

describe('the handshake comes from the dashboard itself', () => {
  it('which Origin is the dashboard: a table', () => {
    const cases: Array<[string | undefined, string | undefined, boolean]> = [
      [undefined, '127.0.0.1:3000', true], // not a browser
      ['http://127.0.0.1:3000', '127.0.0.1:3000', true],
      ['https://desk.example', 'desk.example', true], // behind a proxy that forwards `Host $host`
      ['https://desk.example:8443', 'desk.example', true],
      ['https://attacker.example', 'desk.example', false],
      ['https://desk.example.attacker.example', 'desk.example', false],
      ['null', '127.0.0.1:3000', false],
      ['http://127.0.0.1:3001', '127.0.0.1:3000', false],
    ];
    for (const [origin, host, ok] of cases) assert.equal(isOwnOrigin(origin, host), ok, `${origin} → ${host}`);
  });

  for (const transport of TRANSPORTS) {
    it(`refuses a page of another origin (${transport}); accepts the dashboard's own`, async () => {
      const agent = await member(await createTestAccount());
      const foreign = inboxSocket(server.url, agent.cookie, transport, { origin: 'https://attacker.example' });
      try {
        const outcome = await connectOutcome(foreign);
        assert.equal(outcome.connected, false);
        assert.equal(outcome.code, 'unauthenticated');
      } finally {
        foreign.close();
      }
      const own = inboxSocket(server.url, agent.cookie, transport, { origin: new URL(server.url).origin });
      try {
        assert.equal((await connectOutcome(own)).connected, true);
      } finally {
        own.close();
      }
    });
  }
});

describe('requests refuse bad input precisely', () => {
  const cases: Array<[string, string, unknown, string, RegExp]> = [
    ['inbox:list without a view', 'inbox:list', {}, 'invalid_request', /view/],
    ['inbox:list with an unknown view', 'inbox:list', { view: 'spam' }, 'invalid_request', /must be one of waiting/],
    ['inbox:list with no payload', 'inbox:list', null, 'invalid_request', /./],
    ['typing without a conversation', 'typing', {}, 'invalid_request', /conversation_id/],
    ['typing with a conversation id that is not a UUID', 'typing', { conversation_id: 'abc' }, 'invalid_request', /UUID/],
    ['typing in an unknown conversation', 'typing', { conversation_id: randomUUID() }, 'not_found', /No conversation/],
    ['take over an unknown conversation', 'conversation:take_over', { conversation_id: randomUUID() }, 'not_found', /No conversation/],
    ['take over without a conversation', 'conversation:take_over', {}, 'invalid_request', /conversation_id/],
    [
      'assign to a member id that is not a number',
      'conversation:assign',
      { conversation_id: randomUUID(), member_id: 'bob' },
      'invalid_request',
      /member_id: must be a member id/,
    ],
    ['reply with empty text', 'conversation:reply', { conversation_id: randomUUID(), text: '   ' }, 'invalid_request', /text: must not be empty/],
    ['reply with no text', 'conversation:reply', { conversation_id: randomUUID() }, 'invalid_request', /text/],
    ['note with a NUL character', 'conversation:note', { conversation_id: randomUUID(), text: 'a\u0000b' }, 'invalid_request', /NUL/],
    [
      'snooze until a time that is not ISO 8601',
      'conversation:snooze',
      { conversation_id: randomUUID(), until: 'tomorrow' },
      'invalid_request',
      /until: must be an ISO 8601 time/,
    ],
    [
      'reply with a client_message_id that is not a token',
      'conversation:reply',
      { conversation_id: randomUUID(), client_message_id: 'two words', text: 'hi' },
      'invalid_request',
      /client_message_id: letters, digits/,
    ],
    [
      'note with a client_message_id over 100 characters',
      'conversation:note',
      { conversation_id: randomUUID(), client_message_id: 'x'.repeat(101), text: 'hi' },
      'invalid_request',
      /client_message_id: must be at most 100/,
    ],
    ['an unknown request', 'conversation:delete', { conversation_id: randomUUID() }, 'invalid_request', /unknown request "conversation:delete"/],
  ];
  for (const [what, name, payload, code, message] of cases) {
    it(what, async () => {
      const acct = await createTestAccount();
      const s = await connect(await member(acct));
      const ack = await s.request(name, payload);
      assert.equal(ack.ok, false);
      const error = (ack as { error: { code: string; message: string } }).error;
      assert.equal(error.code, code);
      assert.match(error.message, message);
    });
  }
});

describe('live changes reach the members of the account, and only them', () => {
  it('counts, a Waiting conversation, take over, reply, note and typing arrive live; another account hears nothing', async () => {
    const acct = await createTestAccount();
    const [alice, bob] = [await member(acct, 'agent'), await member(acct, 'admin')];
    const other = await member(await createTestAccount(), 'admin');
    const [a, b, o] = [await connect(alice), await connect(bob, 'polling'), await connect(other)];

    const before = await a.ok<{ counts: Record<string, number> }>('inbox:list', { view: 'waiting' });
    assert.deepEqual(before.counts, { waiting: 0, mine: 0, unassigned: 0, all_open: 0, resolved: 0 });

    const conv = await waitingConversation(acct.accountId);
    await a.until(() => a.of('inbox:changed', conv.id).length > 0, 'the new Waiting conversation');
    await b.until(() => b.of('inbox:changed', conv.id).length > 0, 'the new Waiting conversation on polling');
    const waiting = await a.ok<{ counts: Record<string, number>; conversations: Array<{ id: string }> }>('inbox:list', { view: 'waiting' });
    assert.equal(waiting.counts.waiting, 1);
    assert.deepEqual(
      waiting.conversations.map((c) => c.id),
      [conv.id],
    );

    await conv.takeOver(alice.actor);
    // A status or assignee change carries every member's counts, read once: no member needs to re-read.
    // (The take-over's system message goes out first, without counts.)
    const pushed = (s: typeof a) => s.of('inbox:changed', conv.id).flatMap((p) => (p.payload.counts ? [p.payload.counts] : []));
    await b.until(() => pushed(b).length > 1, 'the take-over');
    assert.deepEqual(pushed(b)[0], { waiting: 1, unassigned: 1, all_open: 0, resolved: 0, mine: {} }, 'the Waiting one, pushed');
    assert.deepEqual(pushed(b).at(-1), { waiting: 0, unassigned: 0, all_open: 1, resolved: 0, mine: { [alice.actor.userId]: 1 } }, 'the take-over, pushed');
    await a.until(() => pushed(a).length > 1, 'the take-over on the websocket');
    assert.deepEqual(pushed(a).at(-1), pushed(b).at(-1), 'the same counts to every member');
    const mine = await a.ok<{ counts: Record<string, number> }>('inbox:list', { view: 'mine' });
    assert.equal(mine.counts.mine, 1);
    assert.equal(mine.counts.waiting, 0);
    const bobs = await b.ok<{ counts: Record<string, number> }>('inbox:list', { view: 'mine' });
    assert.equal(bobs.counts.mine, 0, "Mine counts the member's own");

    await conv.reply(alice.actor, 'Hello, I am here to help');
    await b.until(() => b.of('inbox:message', conv.id).some((p) => (p.payload.message as { text: string }).text === 'Hello, I am here to help'), 'the reply');
    await conv.note(bob.actor, 'VIP customer');
    await a.until(() => a.of('inbox:message', conv.id).some((p) => (p.payload.message as { author: string }).author === 'note'), 'the note');

    await a.ok('typing', { conversation_id: conv.id });
    await b.until(() => b.of('inbox:typing', conv.id).some((p) => p.payload.name === alice.actor.name), 'the typing, under her name');
    const shown = Date.parse(b.of('inbox:typing', conv.id)[0]!.payload.until as string) - Date.now();
    assert.ok(shown > 8000 && shown <= 10_000, `typing shows for 10 s (${shown} ms left)`);
    await a.ok('typing', { conversation_id: conv.id });
    await sleep(200);
    assert.equal(b.of('inbox:typing', conv.id).length, 1, 'keystrokes within 3 s are one typing event');

    await sleep(300);
    assert.deepEqual(o.pushes, [], 'another account hears nothing');
  });

  it("another account's conversation id is refused like an unknown one", async () => {
    const mineAcct = await createTestAccount();
    const theirs = await waitingConversation((await createTestAccount()).accountId);
    const s = await connect(await member(mineAcct));
    const ack = await s.request('typing', { conversation_id: theirs.id });
    assert.equal(ack.ok, false);
    assert.equal((ack as { error: { code: string } }).error.code, 'not_found');
  });
});

describe("a member's reply and note are stored exactly once, however often they are sent", () => {
  type Sent = { message: { id: string; author: string; text: string } };
  /** The conversation's stored messages of one author with this text, as every reader lists them. */
  const stored = async (accountId: number, conversationId: string, author: string, text: string) =>
    ((await getTranscript(accountId, conversationId))?.messages ?? []).filter((m) => m.author === author && m.content === text);

  it('a resend after the ack answers with the first message and stores, publishes and tells the visitor nothing new', async () => {
    const acct = await createTestAccount();
    const [alice, bob] = [await member(acct, 'agent'), await member(acct, 'admin')];
    const [a, b] = [await connect(alice), await connect(bob)];
    const conv = await waitingConversation(acct.accountId);
    const id = randomUUID();
    const first = await a.ok<Sent & { handled_by: string }>('conversation:reply', { conversation_id: conv.id, client_message_id: id, text: 'On my way' });
    assert.equal(first.handled_by, 'human', 'the reply took the conversation over');
    const again = await a.ok<Sent & { changed: boolean }>('conversation:reply', { conversation_id: conv.id, client_message_id: id, text: 'On my way' });
    assert.equal(again.message.id, first.message.id);
    assert.equal(again.changed, false);
    assert.equal((await stored(acct.accountId, conv.id, 'agent', 'On my way')).length, 1);
    await b.until(() => b.of('inbox:message', conv.id).some((p) => (p.payload.message as { id: string }).id === first.message.id), 'the reply');
    await sleep(200);
    const pushed = b.of('inbox:message', conv.id).filter((p) => (p.payload.message as { id: string }).id === first.message.id);
    assert.equal(pushed.length, 1, 'published once');
    assert.equal((pushed[0]!.payload.message as { client_message_id?: string }).client_message_id, id, 'the push names the id the page sent');

    const note = await a.ok<Sent>('conversation:note', { conversation_id: conv.id, client_message_id: 'note-1', text: 'Check the order' });
    const noteAgain = await a.ok<Sent>('conversation:note', { conversation_id: conv.id, client_message_id: 'note-1', text: 'Check the order' });
    assert.equal(noteAgain.message.id, note.message.id);
    assert.equal((await stored(acct.accountId, conv.id, 'note', 'Check the order')).length, 1);

    // The id names one message: as the other kind, or another member's, it is a conflict, not a second row.
    const refused: Array<[InboxMember, string]> = [
      [a, 'conversation:note'],
      [b, 'conversation:reply'],
    ];
    for (const [s, name] of refused) {
      const ack = await s.request(name, { conversation_id: conv.id, client_message_id: id, text: 'On my way' });
      assert.equal(ack.ok, false, name);
      assert.equal((ack as { error: { code: string } }).error.code, 'conflict');
    }
    // A visitor's id and a member's are separate: the same string stores the visitor's message.
    const visitor = await storeVisitorMessage({ accountId: acct.accountId, conversationId: conv.id }, { client_message_id: id, text: 'Thanks' });
    assert.notEqual(visitor.message?.id, first.message.id);
    assert.equal(visitor.message?.author, 'visitor');

    // The same id in another conversation is another message.
    const other = await waitingConversation(acct.accountId);
    const elsewhere = await a.ok<Sent>('conversation:reply', { conversation_id: other.id, client_message_id: id, text: 'On my way' });
    assert.notEqual(elsewhere.message.id, first.message.id);
  });

  it('the same reply sent at once on two connections stores one message, and both acks name it', async () => {
    const acct = await createTestAccount();
    const alice = await member(acct, 'agent');
    const [a1, a2] = [await connect(alice), await connect(alice, 'polling')];
    const conv = await waitingConversation(acct.accountId);
    for (const [name, author] of [
      ['conversation:reply', 'agent'],
      ['conversation:note', 'note'],
    ] as const) {
      const payload = { conversation_id: conv.id, client_message_id: `race-${author}`, text: `Sent twice (${author})` };
      const acks = await Promise.all([a1.ok<Sent>(name, payload), a2.ok<Sent>(name, payload), a1.ok<Sent>(name, payload)]);
      assert.equal(new Set(acks.map((x) => x.message.id)).size, 1, `one message id in every ack (${name})`);
      assert.equal((await stored(acct.accountId, conv.id, author, payload.text)).length, 1, `one row (${name})`);
    }
    const joined = ((await getTranscript(acct.accountId, conv.id))?.messages ?? []).filter((m) => m.author === 'system' && /joined/.test(m.content));
    assert.equal(joined.length, 1, 'one take-over, one "joined" line');
  });

  it("another account's conversation is refused, and the same id there is that account's own", async () => {
    const mine = await createTestAccount();
    const theirs = await createTestAccount();
    const [me, them] = [await member(mine), await member(theirs)];
    const conv = await waitingConversation(theirs.accountId);
    const s = await connect(me);
    for (const name of ['conversation:reply', 'conversation:note']) {
      const ack = await s.request(name, { conversation_id: conv.id, client_message_id: 'shared-id', text: 'Not yours' });
      assert.equal(ack.ok, false);
      assert.equal((ack as { error: { code: string } }).error.code, 'not_found');
    }
    assert.equal((await stored(theirs.accountId, conv.id, 'agent', 'Not yours')).length, 0);
    const t = await connect(them);
    const own = await t.ok<Sent>('conversation:reply', { conversation_id: conv.id, client_message_id: 'shared-id', text: 'Yours' });
    assert.equal(own.message.text, 'Yours');
  });

  it('a reply without client_message_id (older pages) is still stored', async () => {
    const acct = await createTestAccount();
    const s = await connect(await member(acct));
    const conv = await waitingConversation(acct.accountId);
    const payload = { conversation_id: conv.id, text: 'No id' };
    const [x, y] = [await s.ok<Sent>('conversation:reply', payload), await s.ok<Sent>('conversation:reply', payload)];
    assert.notEqual(x.message.id, y.message.id, 'each send is a message, as before');
  });
});

describe('a long conversation: paged for members, full for the visitor (issue 33 item 7)', () => {
  /** Transcript units: a question and its answer are one, any other message one. */
  type Earlier = { messages: Array<{ message_id: string; response_id: string | null; content: string }>; earlier: string | null };
  const units = (messages: Array<{ response_id: string | null; message_id: string }>) => new Set(messages.map((m) => m.response_id ?? m.message_id)).size;

  it('5,000 messages: the first load is the newest page and says there are earlier ones; "Load earlier" walks back by cursor; the visitor is refused at the cap', async () => {
    const acct = await createTestAccount();
    const alice = await member(acct);
    const a = await connect(alice);
    const conv = await waitingConversation(acct.accountId);
    await conv.takeOver(alice.actor);
    const total = 5_000;
    // Planted in one statement, older than the take-over: 2,000 of them the visitor's (the cap), the rest the member's.
    await (await getDb()).execute(sql`
      INSERT INTO conversation_messages (account_id, conversation_id, author, author_user_id, author_name, text, created_at)
      SELECT ${acct.accountId}, ${conv.id}, CASE WHEN g % 5 < 2 THEN 'visitor' ELSE 'agent' END,
        CASE WHEN g % 5 < 2 THEN NULL ELSE ${alice.actor.userId}::int END, CASE WHEN g % 5 < 2 THEN NULL ELSE 'Alice' END,
        'planted ' || g, now() - interval '1 hour' + make_interval(secs => g / 10.0)
      FROM generate_series(1, ${total}) g`);

    const first = (await getLatestMessages(acct.accountId, conv.id))!;
    assert.ok(units(first.messages) <= INBOX_PAGE_SIZE, `${units(first.messages)} units on the first load`);
    assert.ok(first.earlier, 'it says there are earlier messages');
    assert.match(first.messages.at(-1)!.content, /joined/, 'the newest message last');
    assert.ok(first.messages.some((m) => m.content === `planted ${total}`));

    const seen = new Set(first.messages.map((m) => m.message_id));
    let before: string | undefined = first.earlier;
    for (let pages = 0; before; pages++) {
      assert.ok(pages < total, 'the cursor ends');
      const page: Earlier = await a.ok<Earlier>('conversation:messages', { conversation_id: conv.id, before });
      assert.ok(units(page.messages) <= INBOX_PAGE_SIZE);
      for (const m of page.messages) {
        assert.ok(!seen.has(m.message_id), `${m.content} once`);
        seen.add(m.message_id);
      }
      before = page.earlier ?? undefined;
    }
    const everything = (await getTranscript(acct.accountId, conv.id))!;
    assert.equal(seen.size, total + 3, 'every message once: the planted ones, the question and its answer, the joined line');
    // The transcript page reads one page too: the newest, and it says how many there are.
    assert.ok(units(everything.messages) <= TRANSCRIPT_PAGE_SIZE);
    assert.equal(everything.page.total, total + 2);
    assert.equal(everything.page.page, everything.page.pages);
    const oldest = (await getTranscript(acct.accountId, conv.id, { page: '1' }))!;
    assert.equal(oldest.messages[0]!.author, 'visitor', 'page 1 starts with the first question');

    for (const [payload, message] of [
      [{ conversation_id: conv.id, before: 'nope' }, /before: is not a cursor/],
      [{ conversation_id: conv.id }, /before/],
      [{ conversation_id: randomUUID(), before: first.earlier }, /No conversation/],
    ] as const) {
      const r = await a.request('conversation:messages', payload);
      assert.equal(r.ok, false);
      assert.match((r as { error: { message: string } }).error.message, message);
    }

    // The visitor's 2,001st message (2,000 stored and one question) is refused with a code; members still reply.
    await assert.rejects(
      storeVisitorMessage({ accountId: acct.accountId, conversationId: conv.id }, { client_message_id: 'v-full', text: 'one more' }),
      (e) => {
        assert.equal((e as { code?: string }).code, 'limit_reached');
        assert.match((e as Error).message, new RegExp(`${MAX_VISITOR_MESSAGES}`));
        return true;
      },
    );
    await a.ok('conversation:reply', { conversation_id: conv.id, client_message_id: 'm-after-full', text: 'Still here for you.' });
  });
});

describe('a member who loses access is cut off at once', () => {
  it('a removed member is disconnected with session:revoked without sending anything', async () => {
    const acct = await createTestAccount();
    const agent = await member(acct);
    const s = await connect(agent);
    const ownerActor: Actor = { accountId: acct.accountId, userId: 0, role: 'owner', email: acct.email, name: '' };
    await removeMember(CLI, ownerActor, { userId: agent.actor.userId });
    await s.until(() => s.revoked !== undefined && s.disconnected !== undefined, 'the revocation');
    assert.equal(s.revoked!.code, 'session_ended');
  });

  it('a signed-out session is cut off at its next event', async () => {
    const acct = await createTestAccount();
    const agent = await member(acct);
    const s = await connect(agent);
    await s.ok('inbox:list', { view: 'mine' });
    await signOut(server.url, agent.cookie);
    s.socket.emit('inbox:list', { view: 'mine' }, () => assert.fail('an ended session must not be answered'));
    await s.until(() => s.revoked !== undefined && s.disconnected !== undefined, 'the revocation');
  });

  it('a sign-out, a password change or a two-factor requirement ends open sockets at once, without waiting for an event', async () => {
    const acct = await createTestAccount();
    const [a, b, c] = [await member(acct), await member(acct), await member(acct)];
    const [sa, sb, sc] = [await connect(a), await connect(b), await connect(c)];
    await signOut(server.url, a.cookie);
    await sa.until(() => sa.revoked !== undefined && sa.disconnected !== undefined, 'the sign-out');
    await changeMyPassword(
      { userId: b.actor.userId, accountId: acct.accountId, sessionId: 'another-device' },
      { current: PASSWORD, password: 'a changed password' },
    );
    await sb.until(() => sb.revoked !== undefined && sb.disconnected !== undefined, 'the password change');
    assert.equal(sc.revoked, undefined, 'a colleague stays');
    const ownerActor: TeamActor = { accountId: acct.accountId, userId: 0, role: 'owner', email: acct.email, name: '' };
    await setRequireTwoFactor(CLI, ownerActor, true);
    await sc.until(() => sc.revoked !== undefined && sc.disconnected !== undefined, 'the two-factor requirement');
  });

  it('a new connection of the ended session is refused', async () => {
    const acct = await createTestAccount();
    const agent = await member(acct);
    await signOut(server.url, agent.cookie);
    const socket = inboxSocket(server.url, agent.cookie);
    try {
      assert.equal((await connectOutcome(socket)).connected, false);
    } finally {
      socket.close();
    }
  });
});
