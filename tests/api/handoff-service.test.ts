/**
 * The handoff service (lib/conversations/handoff.ts) on the database: every transition through the
 * service with its events, stored messages and webhook outbox rows; the take-over race; visitor
 * messages (idempotent, reopening); ratings; snooze and the sweeper; availability; the inbox's
 * views and counts; canned replies; tenancy; bad input as a table.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { closeDatabase, getDb, rows } from '../../db/client';
import { insertEndpoint } from '../../db/queries/webhooks';
import { createAdminUser } from '../../lib/accounts/service';
import type { Role } from '../../lib/auth/roles';
import { isAppError } from '../../lib/core/errors';
import { setEventPublisher, setInboxPublisher, type InboxEvent } from '../../lib/conversations/events';
import { accountInboxCounts, conversationSummary, inboxCounts, listInboxConversations } from '../../lib/conversations/inbox-views';
import {
  addNote,
  assignConversation,
  handBack,
  markMessagesSeen,
  rateConversation,
  replyAsMember,
  requestHandoff,
  resolveConversation,
  setVisitorEmail,
  snoozeConversation,
  storeVisitorMessage,
  takeOver,
  wakeSnoozedConversations,
} from '../../lib/conversations/handoff';
import { availabilityOf, getHandoffSettings, saveHandoffSettings, setAvailability, touchDashboard } from '../../lib/conversations/availability';
import { createCannedReply, deleteCannedReply, listCannedReplies, updateCannedReply } from '../../lib/conversations/canned-replies';
import type { Member } from '../../lib/conversations/handoff-contract';
import type { ConversationEvent } from '../../lib/conversations/shapes';
import { WEBHOOK_EVENT_TYPES } from '../../lib/conversations/outbox';
import { getConversationWithMessages } from '../../lib/conversations/service';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { newDataDir } from '../helpers/data-dir';

let dataDir: string | undefined;
const published: ConversationEvent[] = [];
const inbox: InboxEvent[] = [];
before(
  async () => {
    if (process.env.TEST_DB !== 'postgres') {
      delete process.env.DATABASE_URL;
      dataDir = newDataDir('svc-handoff-');
      process.env.DATA_DIR = dataDir;
    }
    await getDb();
    setEventPublisher((e) => published.push(e));
    setInboxPublisher((e) => inbox.push(e));
  },
  { timeout: 120_000 },
);
after(async () => {
  await closeDatabase();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

type Team = { accountId: number; owner: Member; ann: Member & { email: string }; bob: Member & { email: string }; channel: number };

async function team(): Promise<Team> {
  const a = await createTestAccount('Handoff Co');
  const [owner] = await rows<{ id: number }>(await getDb(), sql`SELECT id FROM admin_users WHERE account_id = ${a.accountId} AND role = 'owner'`);
  const member = async (name: string, role: Role) => {
    const email = `${name.toLowerCase()}-${randomUUID()}@example.test`;
    const u = await createAdminUser(CLI, { accountId: a.accountId, email, password: 'member password 1', role, name });
    return { accountId: a.accountId, userId: u.user_id, role, email };
  };
  const [channel] = await newChannelIds(1);
  return {
    accountId: a.accountId,
    owner: { accountId: a.accountId, userId: owner!.id, role: 'owner' },
    ann: await member('Ann', 'agent'),
    bob: await member('Bob', 'agent'),
    channel: channel!,
  };
}

/** A conversation (imported, Open, with one answered question), its id. */
async function conversation(t: Team, over: { status?: string } = {}): Promise<string> {
  const c = conversationLine({ channel_id: t.channel, status: over.status ?? 'Open' });
  await importLines(t.accountId, [c, responseLine(c, { question: 'Where is my parcel?', answer: 'I could not find that.' })]);
  return c.conversation_id;
}

async function state(id: string) {
  const [row] = await rows<{
    status: string;
    handled_by: string;
    assignee_id: number | null;
    waiting: boolean;
    resolved: boolean;
    handed_off: boolean;
    replied: boolean;
  }>(
    await getDb(),
    sql`SELECT status, handled_by, assignee_id, waiting_since IS NOT NULL AS waiting, resolved_at IS NOT NULL AS resolved,
      handed_off_at IS NOT NULL AS handed_off, first_reply_at IS NOT NULL AS replied FROM conversations WHERE id = ${id}`,
  );
  return row!;
}

async function storedKinds(id: string): Promise<string[]> {
  const r = await rows<{ kind: string }>(await getDb(), sql`SELECT kind FROM conversation_events WHERE conversation_id = ${id} ORDER BY seq`);
  return r.map((x) => x.kind);
}

async function messages(id: string): Promise<Array<[string, string | null, string]>> {
  const r = await rows<{ author: string; author_name: string | null; text: string }>(
    await getDb(),
    sql`SELECT author, author_name, text FROM conversation_messages WHERE conversation_id = ${id} ORDER BY created_at, seq`,
  );
  return r.map((m) => [m.author, m.author_name, m.text]);
}

async function rejects(p: Promise<unknown>, code: string, message?: RegExp) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isAppError(e), `an AppError, got ${e}`);
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

describe('handoff transitions through the service', () => {
  it('request → take over → reply → note → hand back → resolve → rate, with events, messages and inbox events', async () => {
    const t = await team();
    const id = await conversation(t);
    const visitor = { accountId: t.accountId, conversationId: id };
    await touchDashboard(t.ann);

    const asked = await requestHandoff(visitor);
    assert.deepEqual([asked.status, asked.handled_by, asked.changed, asked.availability.available], ['Waiting', 'human', true, true]);
    assert.deepEqual(await state(id), {
      status: 'Waiting',
      handled_by: 'human',
      assignee_id: null,
      waiting: true,
      resolved: false,
      handed_off: true,
      replied: false,
    });
    const again = await requestHandoff(visitor);
    assert.equal(again.changed, false, 'asking again changes nothing');
    assert.deepEqual(await storedKinds(id), ['status', 'handoff.waiting']);

    const taken = await takeOver(t.ann, { conversation_id: id });
    assert.deepEqual([taken.status, taken.handled_by, taken.assignee_id], ['Open', 'human', t.ann.userId]);
    assert.deepEqual((await state(id)).waiting, false);

    const reply = await replyAsMember(t.bob, { conversation_id: id, text: '  Your parcel left today.  ' });
    assert.equal(reply.message.text, 'Your parcel left today.');
    assert.equal(reply.assignee_id, t.ann.userId, 'a reply keeps the assignee');
    assert.equal((await state(id)).replied, true);

    inbox.length = 0;
    await addNote(t.ann, { conversation_id: id, text: 'VIP customer' });
    assert.deepEqual(
      inbox.map((e) => [e.kind, e.message?.text]),
      [['note', 'VIP customer']],
      'members get the note with its text',
    );

    await handBack(t.ann, { conversation_id: id });
    assert.deepEqual(await state(id), {
      status: 'Open',
      handled_by: 'ai',
      assignee_id: null,
      waiting: false,
      resolved: false,
      handed_off: true,
      replied: true,
    });
    await resolveConversation(t.ann, { conversation_id: id });
    assert.equal((await state(id)).resolved, true);
    assert.deepEqual(await rateConversation(visitor, { rating: 5, comment: 'great' }), { conversation_id: id, rating: 5, comment: 'great' });
    await rejects(rateConversation(visitor, { rating: 4 }), 'conflict', /rated already/);

    assert.deepEqual(await storedKinds(id), [
      'status',
      'handoff.waiting',
      'status',
      'agent.joined',
      'agent.message',
      'status',
      'agent.left',
      'status',
      'conversation.resolved',
    ]);
    assert.deepEqual(await messages(id), [
      ['system', null, 'Ann joined'],
      ['agent', 'Bob', 'Your parcel left today.'],
      ['note', 'Ann', 'VIP customer'],
      ['system', null, 'Ann left — the assistant is back'],
      ['system', null, 'Conversation resolved'],
    ]);
    const kinds = published.filter((e) => e.conversation_id === id).map((e) => e.type);
    assert.ok(!kinds.some((k) => String(k).includes('note')), 'notes are never conversation events');

    const detail = (await getConversationWithMessages(t.accountId, id, new URLSearchParams())) as {
      messages: Array<{ author: string; author_name: string | null }>;
      csat: number;
    };
    assert.equal(detail.csat, 5);
    assert.deepEqual(
      detail.messages.map((m) => [m.author, m.author_name]),
      [
        ['visitor', null],
        ['ai', null],
        ['system', null],
        ['agent', 'Bob'],
        ['note', 'Ann'],
        ['system', null],
        ['system', null],
      ],
    );
  });

  it('two members take over at once: exactly one wins, the other is told who did', async () => {
    for (let round = 0; round < 5; round++) {
      const t = await team();
      const id = await conversation(t);
      await requestHandoff({ accountId: t.accountId, conversationId: id });
      const results = await Promise.allSettled([takeOver(t.ann, { conversation_id: id }), takeOver(t.bob, { conversation_id: id })]);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1, 'exactly one wins');
      assert.equal(lost.length, 1);
      const winner = (await state(id)).assignee_id === t.ann.userId ? 'Ann' : 'Bob';
      assert.ok(isAppError(lost[0]!.reason) && lost[0]!.reason.code === 'conflict');
      assert.match((lost[0]!.reason as Error).message, new RegExp(`^${winner} has taken over`));
      assert.deepEqual(
        (await messages(id)).filter((m) => m[0] === 'system'),
        [['system', null, `${winner} joined`]],
        'one join',
      );
    }
  });

  it('a reply to a conversation the AI handles takes it over first; assign moves it to another member', async () => {
    const t = await team();
    const id = await conversation(t);
    const r = await replyAsMember(t.ann, { conversation_id: id, text: 'Hi, Ann here.' });
    assert.deepEqual([r.status, r.handled_by, r.assignee_id], ['Open', 'human', t.ann.userId]);
    assert.deepEqual(await messages(id), [
      ['system', null, 'Ann joined'],
      ['agent', 'Ann', 'Hi, Ann here.'],
    ]);
    const moved = await assignConversation(t.ann, { conversation_id: id, member_id: t.bob.userId });
    assert.equal(moved.assignee_id, t.bob.userId);
    assert.deepEqual((await messages(id)).at(-1), ['system', null, 'Bob joined']);
    await rejects(takeOver(t.ann, { conversation_id: id }), 'conflict', /^Bob has taken over/);
  });

  it('visitor messages: stored while a person handles it (once per client id), reopening Resolved and Snoozed per the table', async () => {
    const t = await team();
    const id = await conversation(t);
    const visitor = { accountId: t.accountId, conversationId: id };
    const toAi = await storeVisitorMessage(visitor, { client_message_id: 'c1', text: 'hello' });
    assert.deepEqual([toAi.handled_by, toAi.message], ['ai', null], 'the AI answers: nothing stored');

    await takeOver(t.ann, { conversation_id: id });
    const first = await storeVisitorMessage(visitor, { client_message_id: 'c2', text: 'are you there?' });
    const retry = await storeVisitorMessage(visitor, { client_message_id: 'c2', text: 'are you there?' });
    assert.equal(first.message?.id, retry.message?.id, 'a retry stores one row');
    assert.equal((await messages(id)).filter((m) => m[0] === 'visitor').length, 1);

    await resolveConversation(t.ann, { conversation_id: id });
    const reopened = await storeVisitorMessage(visitor, { client_message_id: 'c3', text: 'one more thing' });
    assert.deepEqual([reopened.status, reopened.handled_by, reopened.assignee_id], ['Waiting', 'human', t.ann.userId], 'the person is asked again');

    const ai = await conversation(t);
    await resolveConversation(t.ann, { conversation_id: ai });
    const back = await storeVisitorMessage({ accountId: t.accountId, conversationId: ai }, { client_message_id: 'c4', text: 'hi again' });
    assert.deepEqual([back.status, back.handled_by, back.message], ['Open', 'ai', null]);

    const imported = await conversation(t, { status: 'Closed' });
    const fromClosed = await storeVisitorMessage({ accountId: t.accountId, conversationId: imported }, { client_message_id: 'c5', text: 'hi' });
    assert.equal(fromClosed.status, 'Open', 'an imported status counts as closed');
  });

  it('snooze wakes at its time (the sweeper) or at the visitor’s message; Waiting again when no member replied', async () => {
    const t = await team();
    const now = new Date();
    const soon = new Date(now.getTime() + 60_000).toISOString();
    const waiting = await conversation(t);
    await requestHandoff({ accountId: t.accountId, conversationId: waiting });
    await snoozeConversation(t.ann, { conversation_id: waiting, until: soon });
    const open = await conversation(t);
    await snoozeConversation(t.ann, { conversation_id: open, until: soon });
    assert.equal((await state(open)).status, 'Snoozed');
    assert.equal(await wakeSnoozedConversations({ now }), 0, 'not yet');
    assert.ok((await wakeSnoozedConversations({ now: new Date(now.getTime() + 61_000) })) >= 2);
    assert.deepEqual([(await state(waiting)).status, (await state(open)).status], ['Waiting', 'Open']);

    const byVisitor = await conversation(t);
    await snoozeConversation(t.ann, { conversation_id: byVisitor, until: soon });
    const r = await storeVisitorMessage({ accountId: t.accountId, conversationId: byVisitor }, { client_message_id: 'w', text: 'hello?' });
    assert.equal(r.status, 'Open');
  });

  it('webhooks: status_changed (record + previous_status), message.created (never notes), csat.submitted, in the outbox', async () => {
    const t = await team();
    const db = await getDb();
    await insertEndpoint(db, t.accountId, { url: 'https://hooks.example.test/x', events: [...WEBHOOK_EVENT_TYPES], secret: 'whsec_test' });
    const id = await conversation(t);
    const visitor = { accountId: t.accountId, conversationId: id };
    await requestHandoff(visitor);
    await takeOver(t.ann, { conversation_id: id });
    await storeVisitorMessage(visitor, { client_message_id: 'v1', text: 'hi' });
    await replyAsMember(t.ann, { conversation_id: id, text: 'hello' });
    await addNote(t.ann, { conversation_id: id, text: 'internal' });
    await resolveConversation(t.ann, { conversation_id: id });
    await rateConversation(visitor, { rating: 3 });
    const events = await rows<{ type: string; body: string }>(db, sql`SELECT type, body FROM webhook_events WHERE conversation_id = ${id} ORDER BY seq`);
    const bodies = events.map((e) => ({ type: e.type, data: JSON.parse(e.body).data }));
    assert.deepEqual(
      bodies.map((b) => b.type),
      ['conversation.status_changed', 'conversation.status_changed', 'message.created', 'message.created', 'conversation.status_changed', 'csat.submitted'],
    );
    const changes = bodies
      .filter((b) => b.type === 'conversation.status_changed')
      .map((b) => [b.data.previous_status, b.data.status, b.data.handled_by, b.data.assignee]);
    assert.deepEqual(changes, [
      ['Open', 'Waiting', 'human', null],
      ['Waiting', 'Open', 'human', t.ann.email],
      ['Open', 'Resolved', 'human', t.ann.email],
    ]);
    const created = bodies
      .filter((b) => b.type === 'message.created')
      .map((b) => [b.data.conversation_id, b.data.message.author, b.data.message.author_name, b.data.message.text]);
    assert.deepEqual(created, [
      [id, 'visitor', null, 'hi'],
      [id, 'agent', 'Ann', 'hello'],
    ]);
    assert.deepEqual(bodies.at(-1)!.data, { conversation_id: id, rating: 3, comment: null, handled_by: 'human' });
  });

  it('tenancy: another account’s conversation is not found for every action', async () => {
    const t = await team();
    const other = await team();
    const id = await conversation(other);
    const ref = { conversation_id: id };
    await rejects(takeOver(t.ann, ref), 'not_found');
    await rejects(replyAsMember(t.ann, { ...ref, text: 'x' }), 'not_found');
    await rejects(addNote(t.ann, { ...ref, text: 'x' }), 'not_found');
    await rejects(handBack(t.ann, ref), 'not_found');
    await rejects(resolveConversation(t.ann, ref), 'not_found');
    await rejects(conversationSummary(t.ann, ref), 'not_found');
    await rejects(requestHandoff({ accountId: t.accountId, conversationId: id }), 'not_found');
    await rejects(storeVisitorMessage({ accountId: t.accountId, conversationId: id }, { client_message_id: 'x', text: 'x' }), 'not_found');
    await rejects(setVisitorEmail({ accountId: t.accountId, conversationId: id }, { email: 'a@b.test' }), 'not_found');
    await rejects(assignConversation(t.ann, { ...ref, member_id: other.ann.userId }), 'invalid_request', /member_id/);
    await rejects(takeOver({ ...other.ann, accountId: t.accountId }, { conversation_id: await conversation(t) }), 'forbidden');
  });

  it('bad input gets a precise error', async () => {
    const t = await team();
    const id = await conversation(t);
    const visitor = { accountId: t.accountId, conversationId: id };
    const past = new Date(Date.now() - 1000).toISOString();
    const cases: Array<[string, () => Promise<unknown>, string, RegExp]> = [
      ['conversation id', () => takeOver(t.ann, { conversation_id: 'nope' }), 'invalid_request', /conversation_id/],
      ['empty reply', () => replyAsMember(t.ann, { conversation_id: id, text: '   ' }), 'invalid_request', /text: must not be empty/],
      ['long reply', () => replyAsMember(t.ann, { conversation_id: id, text: 'x'.repeat(10_001) }), 'invalid_request', /at most 10000/],
      ['snooze in the past', () => snoozeConversation(t.ann, { conversation_id: id, until: past }), 'invalid_request', /until: must be in the future/],
      ['snooze not a time', () => snoozeConversation(t.ann, { conversation_id: id, until: 'tomorrow' }), 'invalid_request', /until/],
      ['rating 6', () => rateConversation(visitor, { rating: 6 }), 'invalid_request', /rating: must be from 1 to 5/],
      ['rating before resolve', () => rateConversation(visitor, { rating: 4 }), 'conflict', /Cannot rate: the conversation is Open/],
      ['hand back an AI conversation', () => handBack(t.ann, { conversation_id: id }), 'conflict', /the assistant answers/],
      ['email', () => setVisitorEmail(visitor, { email: 'not an email' }), 'invalid_request', /email/],
      ['client message id', () => storeVisitorMessage(visitor, { text: 'hi' }), 'invalid_request', /client_message_id/],
      ['availability', () => setAvailability(t.ann, 'busy'), 'invalid_request', /online or away/],
      ['inbox view', () => listInboxConversations(t.ann, { view: 'later' }), 'invalid_request', /view: must be one of waiting, mine/],
      ['inbox cursor', () => listInboxConversations(t.ann, { view: 'waiting', cursor: 'abc' }), 'invalid_request', /cursor/],
      ['shortcut', () => createCannedReply(t.ann, { shortcut: 'Hello There', text: 'x' }), 'invalid_request', /shortcut: must be 1–32/],
      [
        'time zone',
        () => saveHandoffSettings(CLI, t.owner, { enabled: true, time_zone: 'Mars/Olympus', hours: [], away_text: '' }),
        'invalid_request',
        /time_zone: must be an IANA/,
      ],
      ['settings need a manager', () => saveHandoffSettings(CLI, t.ann, {}), 'forbidden', /role/],
      ['marked seen ids', () => markMessagesSeen(visitor, { message_ids: ['x'] }), 'invalid_request', /message_ids/],
    ];
    for (const [name, run, code, message] of cases) {
      await rejects(run(), code, message).catch((e) => {
        throw new Error(`${name}: ${(e as Error).message}`);
      });
    }
  });
});

describe('availability, settings and the inbox', () => {
  it('availability: on by default with a member online; away with nobody online, outside hours, or handoff off', async () => {
    const t = await team();
    const db = await getDb();
    const now = new Date('2026-11-27T10:00:00Z'); // a Friday
    assert.deepEqual(await getHandoffSettings(t.accountId), {
      enabled: true,
      time_zone: 'UTC',
      hours: Array(7).fill({ open: true, opens: '00:00', closes: '24:00' }),
      away_text: '',
    });
    assert.deepEqual(await availabilityOf(db, t.accountId, now), { enabled: true, available: false, until: null, away_text: '', expected_wait_seconds: null });
    await touchDashboard(t.ann);
    assert.equal((await availabilityOf(db, t.accountId, now)).available, true);
    await setAvailability(t.ann, 'away');
    assert.equal((await availabilityOf(db, t.accountId, now)).available, false);
    await setAvailability(t.ann, 'online');

    const hours = Array.from({ length: 7 }, (_, i) => ({ open: i < 4, opens: '09:00', closes: '17:00' })); // Monday–Thursday
    await saveHandoffSettings(CLI, t.owner, { enabled: true, time_zone: 'Europe/Berlin', hours, away_text: 'Back on Monday.' });
    const away = await availabilityOf(db, t.accountId, now);
    assert.deepEqual(away, { enabled: true, available: false, until: '2026-11-30T08:00:00.000Z', away_text: 'Back on Monday.', expected_wait_seconds: null });
    const thursday = await availabilityOf(db, t.accountId, new Date('2026-11-26T10:00:00Z'));
    assert.equal(thursday.available, true, '11:00 in Berlin on a Thursday');

    await saveHandoffSettings(CLI, t.owner, { enabled: false, time_zone: 'UTC', hours, away_text: '' });
    assert.equal((await availabilityOf(db, t.accountId, now)).enabled, false);
    await rejects(requestHandoff({ accountId: t.accountId, conversationId: await conversation(t) }), 'forbidden');
  });

  it('expected wait: the median first response of the last 7 days', async () => {
    const t = await team();
    const db = await getDb();
    await touchDashboard(t.ann);
    for (const seconds of [60, 120, 600]) {
      const id = await conversation(t);
      await requestHandoff({ accountId: t.accountId, conversationId: id });
      await db.execute(sql`UPDATE conversations SET handed_off_at = now() - make_interval(secs => ${seconds}) WHERE id = ${id}`);
      await replyAsMember(t.ann, { conversation_id: id, text: 'hi' });
    }
    const a = await availabilityOf(db, t.accountId, new Date());
    assert.ok(a.expected_wait_seconds !== null && Math.abs(a.expected_wait_seconds - 120) <= 2, String(a.expected_wait_seconds));
  });

  it('expected wait: only first responses within office hours count', async () => {
    const t = await team();
    const db = await getDb();
    await touchDashboard(t.ann);
    // Open today and yesterday (UTC, Monday first), closed the other days: the long waits two days ago do not count.
    const today = (new Date().getUTCDay() + 6) % 7;
    const hours = Array.from({ length: 7 }, (_, d) => ({ open: d === today || d === (today + 6) % 7, opens: '00:00', closes: '24:00' }));
    await saveHandoffSettings(CLI, t.owner, { enabled: true, time_zone: 'UTC', hours, away_text: 'Back soon.' });
    for (const seconds of [60, 120, 600, 2 * 86_400, 2 * 86_400 + 60]) {
      const id = await conversation(t);
      await requestHandoff({ accountId: t.accountId, conversationId: id });
      await db.execute(sql`UPDATE conversations SET handed_off_at = now() - make_interval(secs => ${seconds}) WHERE id = ${id}`);
      await replyAsMember(t.ann, { conversation_id: id, text: 'hi' });
    }
    const a = await availabilityOf(db, t.accountId, new Date());
    assert.ok(
      a.expected_wait_seconds !== null && Math.abs(a.expected_wait_seconds - 120) <= 2,
      `the median of 60, 120 and 600 s, not ${a.expected_wait_seconds}`,
    );
  });

  it('handoff:request builds one date formatter per time zone, not one per first response (issue 33 item 6)', async () => {
    const db = await getDb();
    const zones = ['Europe/Berlin', 'America/New_York'];
    const visitors: Array<{ accountId: number; conversationId: string }> = [];
    for (const [i, zone] of zones.entries()) {
      const t = await team();
      await touchDashboard(t.ann);
      const hours = Array(7).fill({ open: true, opens: '00:00', closes: '24:00' });
      await saveHandoffSettings(CLI, t.owner, { enabled: true, time_zone: zone, hours, away_text: '' });
      const id = await conversation(t);
      // 2,000 first responses of the last days (the sample the expected wait reads), each answered in 90 s (or 150 s).
      await db.execute(sql`
        INSERT INTO conversations (id, account_id, channel_id, title, created_at, updated_at, handed_off_at, first_reply_at)
        SELECT gen_random_uuid(), ${t.accountId}, c.channel_id, 'planted', now(), now(), now() - make_interval(mins => g), now() - make_interval(mins => g) + make_interval(secs => ${90 + 60 * i})
        FROM generate_series(1, 2000) g, (SELECT channel_id FROM conversations WHERE id = ${id}) c`);
      visitors.push({ accountId: t.accountId, conversationId: id });
    }
    const Original = Intl.DateTimeFormat;
    let built = 0;
    Intl.DateTimeFormat = new Proxy(Original, {
      construct(target, args, newTarget) {
        built++;
        return Reflect.construct(target, args, newTarget);
      },
    });
    try {
      const started = performance.now();
      for (let n = 0; n < 20; n++) {
        const r = await requestHandoff(visitors[n % 2]!);
        assert.equal(r.availability.expected_wait_seconds, n % 2 === 0 ? 90 : 150);
      }
      assert.ok(
        built <= zones.length,
        `${built} formatters built for 20 requests in ${zones.length} time zones (${Math.round(performance.now() - started)} ms)`,
      );
    } finally {
      Intl.DateTimeFormat = Original;
    }
  });

  it('inbox views and counts, paged by cursor; the summary says what was asked and declined', async () => {
    const t = await team();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await conversation(t);
      await requestHandoff({ accountId: t.accountId, conversationId: id });
      ids.push(id);
    }
    await takeOver(t.ann, { conversation_id: ids[0] });
    await resolveConversation(t.ann, { conversation_id: ids[1] });
    await conversation(t); // Open·ai
    assert.deepEqual(await inboxCounts(t.accountId, t.ann.userId), { waiting: 3, mine: 1, unassigned: 3, all_open: 2, resolved: 1 });
    assert.deepEqual(await inboxCounts(t.accountId, t.bob.userId), { waiting: 3, mine: 0, unassigned: 3, all_open: 2, resolved: 1 });

    const first = await listInboxConversations(t.ann, { view: 'waiting', limit: 2 });
    const second = await listInboxConversations(t.ann, { view: 'waiting', limit: 2, cursor: first.next_cursor });
    assert.deepEqual(
      [...first.conversations, ...second.conversations].map((c) => c.id),
      ids.slice(2),
      'oldest waiting first, no gap, no repeat',
    );
    assert.equal(second.next_cursor, null);
    assert.equal(first.conversations[0]!.preview, 'Where is my parcel?');
    const mine = await listInboxConversations(t.ann, { view: 'mine' });
    assert.deepEqual(
      mine.conversations.map((c) => [c.id, c.assignee]),
      [[ids[0], t.ann.email]],
    );

    const summary = await conversationSummary(t.ann, { conversation_id: ids[0] });
    assert.deepEqual(summary.asked, ['Where is my parcel?']);
    assert.equal(summary.answers.length, 1);
    assert.deepEqual(
      await accountInboxCounts(t.accountId),
      { waiting: 3, unassigned: 3, all_open: 2, resolved: 1, mine: { [t.ann.userId]: 1 } },
      "every member's counts at once: what inbox:changed carries",
    );
  });

  it('the summary says what the visitor asked, also in stored messages (a handoff in words has no response)', async () => {
    const t = await team();
    const c = conversationLine({ channel_id: t.channel, status: 'Open' });
    await importLines(t.accountId, [c]);
    const inWords = { accountId: t.accountId, conversationId: c.conversation_id };
    await requestHandoff(inWords);
    await storeVisitorMessage(inWords, { client_message_id: 'w1', text: 'Can I speak to a human please?' });
    assert.deepEqual((await conversationSummary(t.ann, { conversation_id: c.conversation_id })).asked, ['Can I speak to a human please?']);

    const answered = await conversation(t);
    await requestHandoff({ accountId: t.accountId, conversationId: answered });
    await storeVisitorMessage({ accountId: t.accountId, conversationId: answered }, { client_message_id: 'w2', text: 'It never arrived.' });
    await storeVisitorMessage({ accountId: t.accountId, conversationId: answered }, { client_message_id: 'w3', text: 'Order 1234.' });
    assert.deepEqual(
      (await conversationSummary(t.ann, { conversation_id: answered })).asked,
      ['Where is my parcel?', 'Order 1234.'],
      'the first and the latest',
    );
  });

  it('counts stay exact under concurrent changes, imports that change statuses, and members removed', async () => {
    const t = await team();
    const db = await getDb();
    const truth = async (memberId: number) => {
      const [r] = await rows<Record<string, number>>(
        db,
        sql`SELECT count(*) FILTER (WHERE status = 'Waiting')::int AS waiting,
          count(*) FILTER (WHERE status IN ('Open', 'Waiting', 'Snoozed') AND assignee_id = ${memberId})::int AS mine,
          count(*) FILTER (WHERE status IN ('Open', 'Waiting', 'Snoozed') AND handled_by = 'human' AND assignee_id IS NULL)::int AS unassigned,
          count(*) FILTER (WHERE status = 'Open')::int AS all_open, count(*) FILTER (WHERE status = 'Resolved')::int AS resolved
        FROM conversations WHERE account_id = ${t.accountId}`,
      );
      return r;
    };
    const lines = Array.from({ length: 30 }, (_, i) => conversationLine({ channel_id: t.channel, status: ['Open', 'Waiting', 'Resolved', 'Closed'][i % 4]! }));
    await importLines(t.accountId, lines);
    const ids = lines.map((l) => l.conversation_id);
    await Promise.all(
      ids
        .slice(0, 12)
        .map((id, i) =>
          i % 2
            ? takeOver(i % 4 === 1 ? t.ann : t.bob, { conversation_id: id })
            : requestHandoff({ accountId: t.accountId, conversationId: id }).catch(() => null),
        ),
    );
    await Promise.allSettled(ids.slice(12, 20).flatMap((id) => [takeOver(t.ann, { conversation_id: id }), takeOver(t.bob, { conversation_id: id })]));
    await importLines(
      t.accountId,
      lines.slice(20).map((l, i) => ({ ...l, status: i % 2 ? 'Resolved' : 'Waiting', handled_by: 'human', assignee: i % 3 ? null : t.ann.email })),
    );
    for (const m of [t.ann, t.bob]) assert.deepEqual(await inboxCounts(t.accountId, m.userId), await truth(m.userId), 'counts equal the conversations');
    await db.execute(sql`DELETE FROM admin_users WHERE id = ${t.bob.userId}`);
    assert.deepEqual(await inboxCounts(t.accountId, t.ann.userId), await truth(t.ann.userId), 'a removed member’s conversations become unassigned');
  });

  it('canned replies: CRUD, shortcut unique per account', async () => {
    const t = await team();
    const other = await team();
    const r = await createCannedReply(t.ann, { shortcut: 'refund', text: 'Refunds take 5 days.' });
    await createCannedReply(other.ann, { shortcut: 'refund', text: 'elsewhere' });
    await rejects(createCannedReply(t.bob, { shortcut: 'refund', text: 'again' }), 'conflict', /\/refund is taken/);
    const hi = await createCannedReply(t.ann, { shortcut: 'hi', text: 'Hello!' });
    await rejects(updateCannedReply(t.ann, { id: hi.id, shortcut: 'refund', text: 'x' }), 'conflict');
    const changed = await updateCannedReply(t.ann, { id: hi.id, shortcut: 'hello', text: 'Hello there!' });
    assert.equal(changed.shortcut, 'hello');
    assert.deepEqual(
      (await listCannedReplies(t.ann)).map((c) => c.shortcut),
      ['hello', 'refund'],
    );
    await rejects(updateCannedReply(other.ann, { id: r.id, shortcut: 'x', text: 'y' }), 'not_found');
    await rejects(deleteCannedReply(other.ann, { id: r.id }), 'not_found');
    await deleteCannedReply(t.ann, { id: r.id });
    assert.deepEqual(
      (await listCannedReplies(t.ann)).map((c) => c.shortcut),
      ['hello'],
    );
  });
});
