import type { DashboardSession } from '../auth/session';
import { processSingleton } from '../core/process';
import { requireRole } from '../auth/roles';
import { validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { getLatestMessages } from '../dashboard/service';
import { suggestReply } from '../dashboard/suggested-reply';
import { listAccountMembers } from '../team/service';
import { addNote, assignConversation, handBack, memberTyping, resolveConversation, snoozeConversation, takeOver } from '../conversations/handoff';
import { conversationSummary, inboxCounts, listInboxConversations } from '../conversations/inbox-views';
import { listCannedReplies } from '../conversations/canned-replies';
import { touchDashboard } from '../conversations/availability';
import { getDb } from '../../db/client';
import { getAccountMember, memberClientIdsOf } from '../../db/queries/handoff';
import { listReplyMailStates } from '../../db/queries/mails';
import { replyByMember } from '../email/replies';
import type { InboxRequest, InboxRequestName, InboxView } from './protocol';
import { EarlierMessagesInput } from './schemas';

/** A page of one view and every view's count, as this member sees them (Mine is theirs). */
export async function listInboxView(member: DashboardSession, input: unknown) {
  const [page, counts] = await Promise.all([listInboxConversations(member, input), inboxCounts(member.accountId, member.userId)]);
  return { ...page, counts };
}

/** Keystrokes reach the visitor at most this often; the widget shows typing for 10 s after each. */
const TYPING_EVERY_MS = 3_000;

/** When each member last sent typing to each conversation: per process by nature (this process's sockets). */
const lastTyping = () => processSingleton('svc.inboxTyping', () => new Map<string, number>());

/** A member typing: the core's live `agent.typing` to the visitor and `typing` to members, throttled. */
async function typing(member: DashboardSession, input: unknown) {
  const now = Date.now();
  const key = `${member.userId}:${(input as { conversation_id?: unknown } | null)?.conversation_id}`;
  const last = lastTyping();
  if (now - (last.get(key) ?? 0) < TYPING_EVERY_MS) return {};
  await memberTyping(member, input);
  last.set(key, now);
  if (last.size > 10_000) for (const [k, t] of last) if (now - t > TYPING_EVERY_MS) last.delete(k);
  return {};
}

/** "Load earlier": the units of the conversation before the cursor the last page gave. */
async function earlierMessages(member: DashboardSession, input: unknown) {
  requireRole(member, 'records.read');
  const v = validate(EarlierMessagesInput, input);
  const page = await getLatestMessages(member.accountId, v.conversation_id, v.before);
  if (!page) throw new AppError('not_found', `No conversation with id ${v.conversation_id}.`);
  return { conversation_id: v.conversation_id, messages: page.messages, earlier: page.earlier };
}

/** Each `/inbox` request, its payload parsed by its schema (./schemas.ts): one call of the core. */
export const INBOX_HANDLERS: { [N in InboxRequestName]: (member: DashboardSession, input: InboxRequest<N>) => Promise<object> } = {
  'inbox:list': listInboxView,
  'conversation:messages': earlierMessages,
  'conversation:suggest': suggestReply,
  typing,
  'conversation:take_over': takeOver,
  'conversation:assign': assignConversation,
  'conversation:reply': replyByMember,
  'conversation:note': addNote,
  'conversation:hand_back': handBack,
  'conversation:resolve': resolveConversation,
  'conversation:snooze': snoozeConversation,
};

/** The open dashboard keeps the member available (the core counts the last 10 minutes). */
export async function refreshDashboard(member: DashboardSession): Promise<void> {
  await touchDashboard(member);
}

/** The member's own availability setting (whether they also count as online depends on an open dashboard). */
async function memberAvailability(member: DashboardSession): Promise<'online' | 'away'> {
  return (await getAccountMember(await getDb(), member.accountId, member.userId))?.availability ?? 'away';
}

/** What /inbox first renders: the view's page and counts, and the member's availability. */
export async function inboxPage(member: DashboardSession, view: InboxView) {
  const [list, availability] = await Promise.all([listInboxView(member, { view }), memberAvailability(member)]);
  return { list, availability };
}

/**
 * What /inbox/<id> renders: record, the newest messages (`earlier`: the cursor of the ones before,
 * null when none), summary, the account's members and canned replies; null when not this account's.
 */
export async function inboxConversationPage(member: DashboardSession, conversationId: string) {
  const transcript = await getLatestMessages(member.accountId, conversationId);
  if (!transcript) return null;
  const [summary, { members }, replies, sent, mails] = await Promise.all([
    conversationSummary(member, { conversation_id: transcript.conversation.id }),
    listAccountMembers(member.accountId),
    listCannedReplies(member),
    getDb().then((db) => memberClientIdsOf(db, member.accountId, transcript.conversation.id, member.userId)),
    // The state of each member reply's mail (an email conversation), by message id.
    getDb().then((db) => listReplyMailStates(db, member.accountId, transcript.conversation.id)),
  ]);
  return { ...transcript, summary, members: members.map((m) => ({ user_id: m.user_id, name: m.name || m.email })), replies, sent, mails };
}
