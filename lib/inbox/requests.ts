import type { z } from 'zod';
import type { DashboardSession } from '../auth/session';
import { processSingleton } from '../core/process';
import { getTranscript } from '../dashboard/service';
import { listAccountMembers } from '../team/service';
import {
  conversationSummary,
  getAvailability,
  listCannedReplies,
  inboxCounts,
  listInboxConversations,
  memberTyping as typingToVisitor,
  setInboxPublisher,
  touchDashboard,
  type InboxChange,
} from '../conversations/handoff';
import { TYPING_SHOWN_MS, type InboxRequests, type InboxView } from './protocol';

/** The core calls `publish` after each commit; the namespace registers it once per process. */
export function watchInbox(publish: (change: InboxChange) => void): void {
  setInboxPublisher(publish);
}

/** One view's rows and every view's count, as this member sees them (Mine is theirs). */
export async function listInboxView(member: DashboardSession, req: z.infer<(typeof InboxRequests)['inbox:list']>) {
  const [counts, conversations] = await Promise.all([
    inboxCounts(member.accountId, member.userId),
    listInboxConversations(member.accountId, { view: req.view, userId: member.userId }),
  ]);
  return { view: req.view, counts, conversations };
}

/** Keystrokes reach the visitor at most this often; the widget shows typing for TYPING_SHOWN_MS after each. */
const TYPING_EVERY_MS = 3_000;

/** When each member last sent typing to each conversation: per process by nature (this process's sockets). */
const lastTyping = () => processSingleton('svc.inboxTyping', () => new Map<string, number>());

/**
 * A member typing: the visitor's widget gets the core's live `agent.typing` (throttled), and the
 * reply says until when it shows, so the member's own page can tell the other members.
 */
export async function memberTyping(member: DashboardSession, req: z.infer<(typeof InboxRequests)['typing']>) {
  const now = Date.now();
  const key = `${member.userId}:${req.conversation_id}`;
  const last = lastTyping();
  if (now - (last.get(key) ?? 0) >= TYPING_EVERY_MS) {
    await typingToVisitor(member, req.conversation_id);
    last.set(key, now);
    if (last.size > 10_000) for (const [k, t] of last) if (now - t > TYPING_SHOWN_MS) last.delete(k);
  }
  return { until: new Date(now + TYPING_SHOWN_MS).toISOString() };
}

/** The open dashboard keeps the member available (the core counts the last 10 minutes). */
export async function refreshDashboard(member: DashboardSession): Promise<void> {
  await touchDashboard(member.accountId, member.userId);
}

/** What /inbox first renders: the view's rows and counts, and the member's availability. */
export async function inboxPage(member: DashboardSession, view: InboxView) {
  const [list, availability] = await Promise.all([listInboxView(member, { view }), getAvailability(member)]);
  return { list, availability };
}

/** What /inbox/<id> renders: the record, summary, messages, the account's members and canned replies; null when not this account's. */
export async function inboxConversationPage(member: DashboardSession, conversationId: string) {
  const transcript = await getTranscript(member.accountId, conversationId);
  if (!transcript) return null;
  const [summary, { members }, replies] = await Promise.all([
    conversationSummary(member.accountId, transcript.conversation.id),
    listAccountMembers(member.accountId),
    listCannedReplies(member.accountId),
  ]);
  return { ...transcript, summary, members: members.map((m) => ({ user_id: m.user_id, name: m.name || m.email })), replies };
}
