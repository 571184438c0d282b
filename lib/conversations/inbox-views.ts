/** The members' inbox views (docs/contracts.md §14): pages of a view by an opaque cursor, their counts, a conversation's summary. */
import { getDb } from '../../db/client';
import { getConversationById } from '../../db/queries/conversations';
import {
  countAccountInboxViews,
  countInboxViews,
  listInboxRows,
  listSummaryTurns,
  type AccountInboxCounts,
  type InboxCounts,
  type InboxRow,
  type InboxView,
} from '../../db/queries/inbox';
import { listVisitorMessageEnds } from '../../db/queries/handoff';
import { validate } from '../accounts/service';
import { requireRole } from '../auth/roles';
import { AppError } from '../core/errors';
import { ConversationRef, InboxListInput } from './handoff-contract';
import type { Member } from './handoff-contract';
import type { Source } from './shapes';

export type InboxPage = { view: InboxView; conversations: InboxItem[]; next_cursor: string | null };
export type InboxItem = Omit<InboxRow, 'sort_k'>;

const encodeCursor = (r: InboxRow) => Buffer.from(JSON.stringify([r.sort_k, r.id])).toString('base64url');
function decodeCursor(cursor: string): { k: string; id: string } {
  try {
    const [k, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof k === 'string' && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/.test(k) && typeof id === 'string' && /^[0-9a-f-]{36}$/.test(id)) return { k, id };
  } catch {}
  throw new AppError('invalid_request', 'cursor: is not a cursor this list gave.', {
    errors: [{ param: 'cursor', message: 'is not a cursor this list gave' }],
  });
}

/** A page of an inbox view (waiting, mine, unassigned, all_open, resolved), keyset by an opaque cursor. */
export async function listInboxConversations(member: Member, input: unknown): Promise<InboxPage> {
  requireRole(member, 'records.read');
  const v = validate(InboxListInput, input);
  const limit = v.limit ?? 25;
  const page = await listInboxRows(await getDb(), member.accountId, member.userId, v.view, v.cursor ? decodeCursor(v.cursor) : null, limit + 1);
  const more = page.length > limit;
  const shown = more ? page.slice(0, limit) : page;
  return {
    view: v.view,
    conversations: shown.map(({ sort_k: _k, ...r }) => r),
    next_cursor: more ? encodeCursor(shown.at(-1)!) : null,
  };
}

/** The five views' counts, in one statement. */
export async function inboxCounts(accountId: number, memberId: number): Promise<InboxCounts> {
  return countInboxViews(await getDb(), accountId, memberId);
}

/** Every member's counts at once ("Mine" per assignee), read once per change and pushed to the account's members. */
export async function accountInboxCounts(accountId: number): Promise<AccountInboxCounts> {
  return countAccountInboxViews(await getDb(), accountId);
}

export type ConversationSummary = {
  conversation_id: string;
  /** The visitor's first question and, when there were more, the latest. */
  asked: string[];
  /** The AI's answers in the summary's window: declined (the "no answer" text) or answered, with their sources. */
  answers: Array<{ question: string; answer: string; declined: boolean; failed: boolean; created_at: string }>;
  declined: number;
  /** The sources the AI used, each once (document id and title). */
  sources: Array<{ document_id: string; title: string }>;
};

/** What the visitor asked, what the AI answered or declined, the sources it used: the top of /inbox/<id>. */
export async function conversationSummary(member: Member, input: unknown): Promise<ConversationSummary> {
  requireRole(member, 'records.read');
  const { conversation_id } = validate(ConversationRef, input);
  const db = await getDb();
  if (!(await getConversationById(db, member.accountId, conversation_id))) throw new AppError('not_found', `No conversation with id ${conversation_id}.`);
  const [turns, stored] = await Promise.all([
    listSummaryTurns(db, member.accountId, conversation_id, 1, 4),
    listVisitorMessageEnds(db, member.accountId, conversation_id),
  ]);
  // What the visitor asked: the AI's questions and the visitor's stored messages (a handoff in words has no response).
  const questions = [...turns.map((t) => ({ text: t.question, at: t.created_at })), ...stored.map((m) => ({ text: m.text, at: m.created_at }))]
    .filter((q) => q.text)
    .sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
  const asked = [...new Set([questions[0]?.text, questions.at(-1)?.text].filter((q): q is string => !!q))];
  const sources = new Map<string, { document_id: string; title: string }>();
  for (const t of turns)
    for (const s of (t.sources as Source[] | null) ?? [])
      if (!sources.has(s.document_id)) sources.set(s.document_id, { document_id: s.document_id, title: s.title });
  return {
    conversation_id,
    asked,
    answers: turns.map((t) => ({ question: t.question, answer: t.answer, declined: t.declined, failed: t.error !== null, created_at: t.created_at })),
    declined: turns.filter((t) => t.declined).length,
    sources: [...sources.values()],
  };
}
