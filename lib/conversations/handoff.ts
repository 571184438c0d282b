/**
 * Human handoff (docs/decisions/handoff.md, docs/contracts.md §14): the one service every door
 * calls — the widget's socket (visitor side), the inbox's socket and pages (members), the CLI.
 * Every change of status, handler or assignee goes through the transition table
 * (./status.ts) under the conversation's row lock; its conversation events, stored messages and
 * webhook events are written in the same transaction, and published (to visitors through
 * events.ts, to members through the inbox publisher) only after it commits.
 */
import { getDb, type Db } from '../../db/client';
import { getConversationById } from '../../db/queries/conversations';
import {
  getAccountMember,
  countVisitorMessages,
  getMessageByClientId,
  insertConversationMessage,
  listDueSnoozed,
  lockConversationState,
  markConversationMessagesSeen,
  setConversationRating,
  setConversationVisitorEmail,
  writeConversationState,
  type HandoffStateRow,
  type MemberRow,
  type StoredMessageRow,
} from '../../db/queries/handoff';
import { attachUploads } from '../../db/queries/uploads';
import { validate } from '../accounts/service';
import { requireRole } from '../auth/roles';
import { AppError } from '../core/errors';
import { appendLiveEvent, publishEvent, publishInboxEvent, storeEvent, type InboxEvent } from './events';
import {
  AssignInput,
  ConversationRef,
  MarkSeenInput,
  MAX_SNOOZE_DAYS,
  refuseWhenVisitorMessagesFull,
  MemberTextInput,
  RateInput,
  SnoozeInput,
  VisitorEmailInput,
  VisitorMessageInput,
} from './handoff-contract';
import type { Member } from './handoff-contract';
import { availabilityOf, forgetExpectedWait, type AvailabilityInfo } from './availability';
import { recordWebhookEvent, webhookEventsCommitted } from './outbox';
import { toConversationRecord } from './service';
import type { MessageAttachment } from './messages';
import type { ConversationEvent, EventDraft } from './shapes';
import { transition, type Action, type Change, type StateOf } from './status';

/** The visitor's side: the widget door has checked that the conversation is the visitor's own. */
export type VisitorConversation = { accountId: number; conversationId: string };

/** What a caller learns of the conversation after an action. */
export type HandoffState = { conversation_id: string; status: string; handled_by: 'ai' | 'human'; assignee_id: number | null; changed: boolean };
export type HandoffMessage = { id: string; author: StoredMessageRow['author']; author_name: string | null; text: string; created_at: string };
/** A member's reply in an email conversation: its mail's state (docs/contracts.md §17 "members"). */
export type ReplyMailState = 'queued' | 'sent' | 'failed';

/**
 * Writes the mail that carries a member's reply (the email door, lib/email/replies.ts), in the
 * reply's transaction: an acknowledged reply has its mail, exactly once. True when it wrote one
 * (the conversation is an email conversation).
 */
export type ReplyMailer = (
  tx: Db,
  reply: { accountId: number; conversationId: string; messageId: string; text: string; memberName: string },
) => Promise<boolean>;

/** A member as visitors see them: the name, else the part of the email before @. */
export function displayName(m: { name: string | null; email: string | null }): string {
  return m.name?.trim() || (m.email ?? '').split('@')[0] || 'A team member';
}

// ---- the transaction and what it publishes after the commit

/** What a transaction publishes once it commits; `replied`: accounts whose expected wait a first reply changed. */
type Effects = { events: ConversationEvent[]; inbox: InboxEvent[]; queued: number; replied: number[] };

async function inTransaction<T>(fn: (tx: Db, fx: Effects) => Promise<T>): Promise<T> {
  const db = await getDb();
  const fx: Effects = { events: [], inbox: [], queued: 0, replied: [] };
  const result = await db.transaction(async (tx) => fn(tx as unknown as Db, fx));
  for (const e of fx.events) publishEvent(e);
  for (const e of fx.inbox) publishInboxEvent(e);
  webhookEventsCommitted(fx.queued);
  for (const accountId of fx.replied) forgetExpectedWait(accountId);
  return result;
}

async function event(tx: Db, fx: Effects, draft: EventDraft): Promise<void> {
  fx.events.push((await storeEvent(tx, draft)) as ConversationEvent);
}

const stateOf = (s: HandoffStateRow): StateOf => ({ status: s.status, handled_by: s.handled_by, assignee_id: s.assignee_id, waiting: s.waiting, csat: s.csat });

function refusal(action: Action, code: string, s: HandoffStateRow): AppError {
  if (code === 'taken_by_other')
    return new AppError('conflict', `${displayName({ name: s.assignee_name, email: s.assignee_email })} has taken over this conversation.`);
  if (code === 'already_rated') return new AppError('conflict', 'This conversation has been rated already.');
  const now = `${s.status}${s.status === 'Open' ? ` (${s.handled_by === 'human' ? 'a person handles it' : 'the assistant answers'})` : ''}`;
  return new AppError('conflict', `Cannot ${action.replace('_', ' ')}: the conversation is ${now}.`);
}

type Applied = { before: HandoffStateRow; change: Change | null };

/** Locks the conversation's row and reads its state; not_found when it is not this account's. */
async function lockedState(tx: Db, accountId: number, conversationId: string): Promise<HandoffStateRow> {
  const s = await lockConversationState(tx, accountId, conversationId);
  if (!s) throw new AppError('not_found', `No conversation with id ${conversationId}.`);
  return s;
}

/**
 * Locks the conversation, asks the table and writes the change; a refusal is a conflict that
 * says what the conversation is now (the race loser of a take-over is told who won).
 */
async function apply(
  tx: Db,
  accountId: number,
  conversationId: string,
  action: Action,
  actor: { member_id: number | null; target_id?: number },
  snoozedUntil: string | null = null,
): Promise<Applied> {
  return applyLocked(tx, accountId, conversationId, await lockedState(tx, accountId, conversationId), action, actor, snoozedUntil);
}

/** apply, on a conversation this transaction has locked already (`before`: its state then). */
async function applyLocked(
  tx: Db,
  accountId: number,
  conversationId: string,
  before: HandoffStateRow,
  action: Action,
  actor: { member_id: number | null; target_id?: number },
  snoozedUntil: string | null = null,
): Promise<Applied> {
  const outcome = transition(action, stateOf(before), actor);
  if (outcome.kind === 'refused') throw refusal(action, outcome.code, before);
  if (outcome.kind === 'unchanged') return { before, change: null };
  const c = outcome.change;
  const written = await writeConversationState(
    tx,
    accountId,
    conversationId,
    { status: before.status, assignee_id: before.assignee_id },
    {
      status: c.status,
      handled_by: c.handled_by,
      assignee_id: c.assignee_id,
      waiting: c.waiting,
      handed_off: c.handed_off,
      replied: c.replied,
      snoozed_until: snoozedUntil,
    },
  );
  if (!written) throw new AppError('conflict', 'The conversation changed meanwhile; reload it and try again.');
  return { before, change: c };
}

/**
 * After a change: the widget's `status` event and the `conversation.status_changed` webhook when
 * the status or the handler changed, and the members' `changed` event whenever anything did.
 */
async function changed(tx: Db, fx: Effects, accountId: number, conversationId: string, a: Applied): Promise<void> {
  const c = a.change;
  if (!c) return;
  if (c.replied) fx.replied.push(accountId);
  const moved = c.status !== a.before.status || c.handled_by !== a.before.handled_by;
  if (moved) {
    await event(tx, fx, { type: 'status', conversation_id: conversationId, status: c.status, handled_by: c.handled_by });
    fx.queued += await recordWebhookEvent(tx, accountId, 'conversation.status_changed', conversationId, async () => {
      const row = await getConversationById(tx, accountId, conversationId);
      return row && { ...toConversationRecord(row), previous_status: a.before.status };
    });
  }
  const assignee = c.assignee_id === null ? null : c.assignee_id === a.before.assignee_id ? a.before : await getAccountMember(tx, accountId, c.assignee_id);
  const assigneeEmail = assignee === null ? null : 'assignee_email' in assignee ? assignee.assignee_email : assignee.email;
  const assigneeName = assignee === null ? null : 'assignee_name' in assignee ? assignee.assignee_name : assignee.name;
  fx.inbox.push({
    account_id: accountId,
    conversation_id: conversationId,
    kind: 'changed',
    conversation: {
      title: a.before.title,
      status: c.status,
      previous_status: a.before.status,
      handled_by: c.handled_by,
      assignee_id: c.assignee_id,
      assignee: assigneeEmail,
      assignee_name: assigneeName,
    },
  });
}

/** Stores a message; visitor and member messages also go out as the `message.created` webhook, every message to members. */
async function storeMessage(
  tx: Db,
  fx: Effects,
  accountId: number,
  conversationId: string,
  m: { author: StoredMessageRow['author']; authorUserId: number | null; authorName: string | null; text: string; clientMessageId?: string | null },
  attachments: MessageAttachment[] = [],
): Promise<StoredMessageRow | null> {
  const row = await insertConversationMessage(tx, accountId, conversationId, { ...m, clientMessageId: m.clientMessageId ?? null });
  if (!row) return null;
  await attachUploads(
    tx,
    accountId,
    attachments.map((a) => a.id),
    conversationId,
    row.id,
  );
  const message = toHandoffMessage(row);
  if (row.author === 'visitor' || row.author === 'agent') {
    fx.queued += await recordWebhookEvent(tx, accountId, 'message.created', conversationId, async () => ({ conversation_id: conversationId, message }));
  }
  const sentAs = row.author !== 'visitor' && row.client_message_id ? { client_message_id: row.client_message_id } : {};
  fx.inbox.push({
    account_id: accountId,
    conversation_id: conversationId,
    kind: row.author === 'note' ? 'note' : 'message',
    message: { ...message, ...sentAs, ...(attachments.length > 0 ? { attachments } : {}) },
  });
  return row;
}

const toHandoffMessage = (r: StoredMessageRow): HandoffMessage => ({
  id: r.id,
  author: r.author,
  author_name: r.author_name,
  text: r.text,
  created_at: r.created_at,
});

/** "<name> joined": a system line and the widget's agent.joined. */
async function joined(tx: Db, fx: Effects, accountId: number, conversationId: string, name: string): Promise<void> {
  await storeMessage(tx, fx, accountId, conversationId, { author: 'system', authorUserId: null, authorName: null, text: `${name} joined` });
  await event(tx, fx, { type: 'agent.joined', conversation_id: conversationId, name });
}

/** A person joins when the conversation passes to a member it was not with. */
const joinedNow = (a: Applied) =>
  !!a.change && a.change.handled_by === 'human' && a.change.assignee_id !== null && a.change.assignee_id !== a.before.assignee_id;

async function requireMember(db: Db, member: Member): Promise<MemberRow> {
  requireRole(member, 'records.read');
  const row = await getAccountMember(db, member.accountId, member.userId);
  if (!row) throw new AppError('forbidden', 'You are not a member of this account.');
  return row;
}

const stateAfter = (conversationId: string, a: Applied): HandoffState => ({
  conversation_id: conversationId,
  status: a.change?.status ?? a.before.status,
  handled_by: a.change?.handled_by ?? a.before.handled_by,
  assignee_id: a.change ? a.change.assignee_id : a.before.assignee_id,
  changed: !!a.change,
});

// ---- the visitor's side

/**
 * The visitor asks for a person (the button, words the phrase matcher recognised, or the button
 * after a declined answer). Idempotent: asking again while Waiting or with a person changes
 * nothing and publishes nothing. The visitor is told the expected wait when someone is there,
 * else the away text (handoff.away): the conversation is Waiting either way, so the team finds it.
 */
export async function requestHandoff(
  visitor: VisitorConversation,
  o: { byMail: boolean } = { byMail: false },
): Promise<HandoffState & { availability: AvailabilityInfo }> {
  const { accountId, conversationId } = visitor;
  const db = await getDb();
  const availability = await availabilityOf(db, accountId, new Date());
  // The switch is the widget's button; mail always reaches the team (docs/decisions/email.md).
  if (!availability.enabled && !o.byMail) throw new AppError('forbidden', 'This account does not offer a person to talk to.');
  return inTransaction(async (tx, fx) => {
    const a = await apply(tx, accountId, conversationId, 'request_handoff', { member_id: null });
    if (a.change) {
      await changed(tx, fx, accountId, conversationId, a);
      if (availability.available) {
        await event(tx, fx, { type: 'handoff.waiting', conversation_id: conversationId, expected_wait_seconds: availability.expected_wait_seconds });
      } else {
        await event(tx, fx, { type: 'handoff.away', conversation_id: conversationId, until: availability.until, text: availability.away_text });
      }
    }
    return { ...stateAfter(conversationId, a), availability };
  });
}

/**
 * A visitor's message (idempotent on `client_message_id`). It first moves the conversation per
 * the table (a Resolved or Snoozed one reopens). While a person handles the conversation the
 * message is stored here (visitor.message, message.created); when the AI handles it, nothing is
 * stored and `message` is null: the caller asks the AI as usual (lib/chat's `ask`). `attachments`:
 * the visitor's own unattached uploads (the visitor's door checked them), attached to the message.
 */
export async function storeVisitorMessage(
  visitor: VisitorConversation,
  input: unknown,
  attachments: MessageAttachment[] = [],
): Promise<HandoffState & { message: HandoffMessage | null }> {
  return visitorMessage(visitor, input, false, attachments);
}

/**
 * A visitor's message kept for the team whoever handles the conversation, never answered by the AI
 * (mail that must not be answered: auto-replies, bulk mail; docs/contracts.md §17). It moves the
 * conversation as any visitor message does (a Resolved one reopens).
 */
export async function keepVisitorMessage(
  visitor: VisitorConversation,
  input: unknown,
  attachments: MessageAttachment[] = [],
): Promise<HandoffState & { message: HandoffMessage }> {
  return (await visitorMessage(visitor, input, true, attachments)) as HandoffState & { message: HandoffMessage };
}

async function visitorMessage(
  visitor: VisitorConversation,
  input: unknown,
  keep: boolean,
  attachments: MessageAttachment[],
): Promise<HandoffState & { message: HandoffMessage | null }> {
  const v = validate(VisitorMessageInput, { ...(input as object), conversation_id: visitor.conversationId });
  const { accountId, conversationId } = visitor;
  return inTransaction(async (tx, fx) => {
    const first = await getMessageByClientId(tx, accountId, conversationId, v.client_message_id, 'visitor');
    if (first) {
      return { ...stateAfter(conversationId, { before: await lockedState(tx, accountId, conversationId), change: null }), message: toHandoffMessage(first) };
    }
    const a = await apply(tx, accountId, conversationId, 'visitor_message', { member_id: null });
    await changed(tx, fx, accountId, conversationId, a);
    const after = stateAfter(conversationId, a);
    if (after.handled_by !== 'human' && !keep) return { ...after, message: null };
    refuseWhenVisitorMessagesFull(await countVisitorMessages(tx, accountId, conversationId));
    const row = await storeMessage(
      tx,
      fx,
      accountId,
      conversationId,
      {
        author: 'visitor',
        authorUserId: null,
        authorName: null,
        text: v.text,
        clientMessageId: v.client_message_id,
      },
      attachments,
    );
    if (!row) throw new AppError('conflict', 'The message was stored meanwhile; send it again.');
    await event(tx, fx, {
      type: 'visitor.message',
      conversation_id: conversationId,
      message_id: row.id,
      client_message_id: v.client_message_id,
      text: row.text,
      created_at: row.created_at,
    });
    return { ...after, message: toHandoffMessage(row) };
  });
}

/** The visitor's rating after Resolve, once (csat.submitted). */
export async function rateConversation(
  visitor: VisitorConversation,
  input: unknown,
): Promise<{ conversation_id: string; rating: number; comment: string | null }> {
  const v = validate(RateInput, { ...(input as object), conversation_id: visitor.conversationId });
  const { accountId, conversationId } = visitor;
  const comment = v.comment ? v.comment : null;
  return inTransaction(async (tx, fx) => {
    await apply(tx, accountId, conversationId, 'rate', { member_id: null });
    const rated = await setConversationRating(tx, accountId, conversationId, v.rating, comment);
    if (!rated) throw new AppError('conflict', 'This conversation has been rated already.');
    fx.queued += await recordWebhookEvent(tx, accountId, 'csat.submitted', conversationId, async () => ({
      conversation_id: conversationId,
      rating: v.rating,
      comment,
      handled_by: rated.handled_by,
    }));
    fx.inbox.push({ account_id: accountId, conversation_id: conversationId, kind: 'rated', rating: v.rating });
    return { conversation_id: conversationId, rating: v.rating, comment };
  });
}

/** Where a member's reply the visitor has not seen is mailed (the away case). */
export async function setVisitorEmail(visitor: VisitorConversation, input: unknown): Promise<{ conversation_id: string; email: string }> {
  const v = validate(VisitorEmailInput, { ...(input as object), conversation_id: visitor.conversationId });
  const ok = await setConversationVisitorEmail(await getDb(), visitor.accountId, visitor.conversationId, v.email);
  if (!ok) throw new AppError('not_found', `No conversation with id ${visitor.conversationId}.`);
  return { conversation_id: visitor.conversationId, email: v.email };
}

/** The visitor's widget showed these member and system messages (all of them without `message_ids`); they are not mailed. */
export async function markMessagesSeen(visitor: VisitorConversation, input: unknown = {}): Promise<{ seen: number }> {
  const v = validate(MarkSeenInput, { ...(input as object), conversation_id: visitor.conversationId });
  return { seen: await markConversationMessagesSeen(await getDb(), visitor.accountId, visitor.conversationId, v.message_ids ?? null) };
}

// ---- members

/** "Take over": the conversation is the member's (a conflict naming the winner when another member holds it). */
export async function takeOver(member: Member, input: unknown): Promise<HandoffState> {
  const { conversation_id } = validate(ConversationRef, input);
  return inTransaction(async (tx, fx) => {
    const me = await requireMember(tx, member);
    const a = await apply(tx, member.accountId, conversation_id, 'take_over', { member_id: me.id });
    await changed(tx, fx, member.accountId, conversation_id, a);
    if (joinedNow(a)) await joined(tx, fx, member.accountId, conversation_id, displayName(me));
    return stateAfter(conversation_id, a);
  });
}

/** Assigns the conversation to a member of the account (the visitor sees them join). */
export async function assignConversation(member: Member, input: unknown): Promise<HandoffState> {
  const v = validate(AssignInput, input);
  return inTransaction(async (tx, fx) => {
    await requireMember(tx, member);
    const target = await getAccountMember(tx, member.accountId, v.member_id);
    if (!target)
      throw new AppError('invalid_request', `member_id: no member ${v.member_id} in this account.`, {
        errors: [{ param: 'member_id', message: 'is not a member of this account' }],
      });
    const a = await apply(tx, member.accountId, v.conversation_id, 'assign', { member_id: member.userId, target_id: target.id });
    await changed(tx, fx, member.accountId, v.conversation_id, a);
    if (joinedNow(a)) await joined(tx, fx, member.accountId, v.conversation_id, displayName(target));
    return stateAfter(v.conversation_id, a);
  });
}

/**
 * The first message a member sent with this `client_message_id` in this conversation, for a resend
 * (its ack was lost): null when there is none. Called with the conversation locked, so a resend
 * racing the first waits for its commit and finds it. The id used for another kind of message, or
 * by another member, is a conflict.
 */
async function resentMessage(tx: Db, me: MemberRow, accountId: number, conversationId: string, author: 'agent' | 'note', clientMessageId?: string) {
  if (clientMessageId === undefined) return null;
  const first = await getMessageByClientId(tx, accountId, conversationId, clientMessageId, 'member');
  if (!first) return null;
  if (first.author !== author || first.author_user_id !== me.id)
    throw new AppError('conflict', 'client_message_id: already used for another message in this conversation.', {
      errors: [{ param: 'client_message_id', message: 'is already used for another message' }],
    });
  return toHandoffMessage(first);
}

/**
 * A member's reply to the visitor; a conversation no member holds is taken over first, in the same
 * transaction. Idempotent on `client_message_id`: a resend answers with the first reply and the
 * conversation as it is now, and changes nothing.
 */
export async function replyAsMember(
  member: Member,
  input: unknown,
  mailer?: ReplyMailer,
): Promise<HandoffState & { message: HandoffMessage & { mail?: ReplyMailState } }> {
  const v = validate(MemberTextInput, input);
  return inTransaction(async (tx, fx) => {
    const me = await requireMember(tx, member);
    const before = await lockedState(tx, member.accountId, v.conversation_id);
    const resent = await resentMessage(tx, me, member.accountId, v.conversation_id, 'agent', v.client_message_id);
    if (resent) return { ...stateAfter(v.conversation_id, { before, change: null }), message: resent };
    const name = displayName(me);
    const a = await applyLocked(tx, member.accountId, v.conversation_id, before, 'reply', { member_id: me.id });
    await changed(tx, fx, member.accountId, v.conversation_id, a);
    if (joinedNow(a))
      await joined(
        tx,
        fx,
        member.accountId,
        v.conversation_id,
        displayName(a.change?.assignee_id === me.id ? me : { name: a.before.assignee_name, email: a.before.assignee_email }),
      );
    const row = await storeMessage(tx, fx, member.accountId, v.conversation_id, {
      author: 'agent',
      authorUserId: me.id,
      authorName: name,
      text: v.text,
      clientMessageId: v.client_message_id,
    });
    if (!row) throw new AppError('conflict', 'The message was stored meanwhile; send it again.');
    await event(tx, fx, { type: 'agent.message', conversation_id: v.conversation_id, message_id: row.id, name, text: row.text, created_at: row.created_at });
    const mailed = mailer
      ? await mailer(tx, { accountId: member.accountId, conversationId: v.conversation_id, messageId: row.id, text: row.text, memberName: name })
      : false;
    if (!mailed) return { ...stateAfter(v.conversation_id, a), message: toHandoffMessage(row) };
    // Members see the mail queued with the reply itself.
    for (const e of fx.inbox) if (e.message?.id === row.id) e.message.mail = 'queued';
    return { ...stateAfter(v.conversation_id, a), message: { ...toHandoffMessage(row), mail: 'queued' } };
  });
}

/** An internal note: stored and sent to members only, never a conversation event or a webhook. Idempotent like a reply. */
export async function addNote(member: Member, input: unknown): Promise<{ conversation_id: string; message: HandoffMessage }> {
  const v = validate(MemberTextInput, input);
  return inTransaction(async (tx, fx) => {
    const me = await requireMember(tx, member);
    const before = await lockedState(tx, member.accountId, v.conversation_id);
    const resent = await resentMessage(tx, me, member.accountId, v.conversation_id, 'note', v.client_message_id);
    if (resent) return { conversation_id: v.conversation_id, message: resent };
    await applyLocked(tx, member.accountId, v.conversation_id, before, 'note', { member_id: me.id });
    const row = await storeMessage(tx, fx, member.accountId, v.conversation_id, {
      author: 'note',
      authorUserId: me.id,
      authorName: displayName(me),
      text: v.text,
      clientMessageId: v.client_message_id,
    });
    if (!row) throw new AppError('conflict', 'The message was stored meanwhile; send it again.');
    return { conversation_id: v.conversation_id, message: toHandoffMessage(row) };
  });
}

/** "Hand back to AI": the person leaves ("<name> left — the assistant is back"). */
export async function handBack(member: Member, input: unknown): Promise<HandoffState> {
  const { conversation_id } = validate(ConversationRef, input);
  return inTransaction(async (tx, fx) => {
    const me = await requireMember(tx, member);
    const a = await apply(tx, member.accountId, conversation_id, 'hand_back', { member_id: me.id });
    await changed(tx, fx, member.accountId, conversation_id, a);
    const name = a.before.assignee_id !== null ? displayName({ name: a.before.assignee_name, email: a.before.assignee_email }) : displayName(me);
    await storeMessage(tx, fx, member.accountId, conversation_id, {
      author: 'system',
      authorUserId: null,
      authorName: null,
      text: `${name} left — the assistant is back`,
    });
    await event(tx, fx, { type: 'agent.left', conversation_id, name });
    return stateAfter(conversation_id, a);
  });
}

/** "Resolve": the visitor is asked for a rating (conversation.resolved). */
export async function resolveConversation(member: Member, input: unknown): Promise<HandoffState> {
  const { conversation_id } = validate(ConversationRef, input);
  return inTransaction(async (tx, fx) => {
    const me = await requireMember(tx, member);
    const a = await apply(tx, member.accountId, conversation_id, 'resolve', { member_id: me.id });
    await changed(tx, fx, member.accountId, conversation_id, a);
    await storeMessage(tx, fx, member.accountId, conversation_id, { author: 'system', authorUserId: null, authorName: null, text: 'Conversation resolved' });
    await event(tx, fx, { type: 'conversation.resolved', conversation_id });
    return stateAfter(conversation_id, a);
  });
}

/** "Snooze" until a time (in the future, at most MAX_SNOOZE_DAYS away); it wakes then or at the visitor's next message. */
export async function snoozeConversation(member: Member, input: unknown, now = new Date()): Promise<HandoffState & { snoozed_until: string }> {
  const v = validate(SnoozeInput, input);
  const until = new Date(v.until);
  if (until.getTime() <= now.getTime() || until.getTime() > now.getTime() + MAX_SNOOZE_DAYS * 86_400_000) {
    throw new AppError('invalid_request', `until: must be in the future and at most ${MAX_SNOOZE_DAYS} days away.`, {
      errors: [{ param: 'until', message: `must be in the future and at most ${MAX_SNOOZE_DAYS} days away` }],
    });
  }
  return inTransaction(async (tx, fx) => {
    const me = await requireMember(tx, member);
    const a = await apply(tx, member.accountId, v.conversation_id, 'snooze', { member_id: me.id }, until.toISOString());
    await changed(tx, fx, member.accountId, v.conversation_id, a);
    return { ...stateAfter(v.conversation_id, a), snoozed_until: until.toISOString() };
  });
}

/**
 * The sweeper: wakes snoozed conversations whose time has come (`now` or earlier), each in its
 * own transaction; one that changed meanwhile (woken by the visitor, re-snoozed) is skipped.
 * Returns how many it woke.
 */
export async function wakeSnoozedConversations(o: { now?: Date; limit?: number } = {}): Promise<number> {
  const now = o.now ?? new Date();
  const due = await listDueSnoozed(await getDb(), now.toISOString(), o.limit ?? 100);
  let woken = 0;
  for (const d of due) {
    try {
      await inTransaction(async (tx, fx) => {
        const s = await lockConversationState(tx, d.account_id, d.id);
        if (s?.status !== 'Snoozed' || s.snoozed_until_ms === null || s.snoozed_until_ms > now.getTime()) return;
        const a = await applyLocked(tx, d.account_id, d.id, s, 'wake', { member_id: null });
        await changed(tx, fx, d.account_id, d.id, a);
        woken++;
      });
    } catch (e) {
      if (!(e instanceof AppError && e.code === 'conflict')) throw e;
    }
  }
  return woken;
}

/** The member is typing: a live event to the visitor (no row), named like their messages. */
export async function memberTyping(member: Member, input: unknown): Promise<void> {
  const { conversation_id } = validate(ConversationRef, input);
  const db = await getDb();
  const me = await requireMember(db, member);
  const s = await getConversationById(db, member.accountId, conversation_id);
  if (!s) throw new AppError('not_found', `No conversation with id ${conversation_id}.`);
  await appendLiveEvent(db, { type: 'agent.typing', conversation_id, name: displayName(me) });
  publishInboxEvent({ account_id: member.accountId, conversation_id, kind: 'typing', name: displayName(me) });
}
