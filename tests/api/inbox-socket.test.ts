/**
 * The members' `/inbox` namespace (docs/contracts.md §14, docs/decisions/inbox.md) through the real
 * server and database: who may connect, counts and views, live changes of the member's own
 * account only, typing, another account's conversation refused, and a removed member or an ended
 * session cut off at once.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createAdminUser } from '../../lib/accounts/service';
import { removeMember } from '../../lib/team/service';
import type { Role } from '../../lib/auth/roles';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { connectMember, inboxSocket, type InboxMember } from '../helpers/inbox';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn, signOut } from '../helpers/signin';
import { connectOutcome, sleep, TRANSPORTS } from '../helpers/widget';
import { waitingConversation, type Member as CoreMember } from '../helpers/handoff';

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
  const u = await createAdminUser({ accountId: acct.accountId, email, password: PASSWORD, role, name });
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

describe('a member who loses access is cut off at once', () => {
  it('a removed member is disconnected with session:revoked without sending anything', async () => {
    const acct = await createTestAccount();
    const agent = await member(acct);
    const s = await connect(agent);
    const ownerActor: Actor = { accountId: acct.accountId, userId: 0, role: 'owner', email: acct.email, name: '' };
    await removeMember(ownerActor, { userId: agent.actor.userId });
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
