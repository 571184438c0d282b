import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { preciseUtcText, utcText } from './shared';

/** The members' inbox (lib/conversations/inbox-views.ts): its five views, their counts, a conversation's summary turns. */

export const INBOX_VIEWS = ['waiting', 'mine', 'unassigned', 'all_open', 'resolved'] as const;
export type InboxView = (typeof INBOX_VIEWS)[number];

/**
 * Each view: its condition and its order, matching one partial index of migration 0015
 * (Waiting oldest first by waiting_since; Resolved newest first by resolved_at; the rest newest
 * first by updated_at).
 */
function viewOf(view: InboxView, memberId: number): { where: SQL; col: 'waiting_since' | 'updated_at' | 'resolved_at'; dir: 'ASC' | 'DESC' } {
  switch (view) {
    case 'waiting':
      return { where: sql`c.status = 'Waiting'`, col: 'waiting_since', dir: 'ASC' };
    case 'mine':
      return { where: sql`c.status IN ('Open', 'Waiting', 'Snoozed') AND c.assignee_id = ${memberId}`, col: 'updated_at', dir: 'DESC' };
    case 'unassigned':
      return { where: sql`c.status IN ('Open', 'Waiting', 'Snoozed') AND c.handled_by = 'human' AND c.assignee_id IS NULL`, col: 'updated_at', dir: 'DESC' };
    case 'all_open':
      return { where: sql`c.status = 'Open'`, col: 'updated_at', dir: 'DESC' };
    case 'resolved':
      return { where: sql`c.status = 'Resolved'`, col: 'resolved_at', dir: 'DESC' };
  }
}

export type InboxRow = {
  id: string;
  title: string;
  status: string;
  handled_by: 'ai' | 'human';
  assignee_id: number | null;
  assignee: string | null;
  assignee_name: string | null;
  channel_id: number;
  /** The sender's address of a conversation that came by mail (docs/contracts.md §17); null for the widget's. */
  email_from: string | null;
  waiting_since: string | null;
  resolved_at: string | null;
  snoozed_until: string | null;
  created_at: string;
  updated_at: string;
  csat: number | null;
  preview: string | null;
  /** The view's sort key, microseconds (the cursor). */
  sort_k: string;
};

/** A page of an inbox view after the cursor `(k, id)` (keyset, never OFFSET). */
export async function listInboxRows(
  db: Db,
  accountId: number,
  memberId: number,
  view: InboxView,
  after: { k: string; id: string } | null,
  limit: number,
): Promise<InboxRow[]> {
  const v = viewOf(view, memberId);
  const col = sql.raw(`c.${v.col}`);
  const d = sql.raw(v.dir);
  const cmp = sql.raw(v.dir === 'ASC' ? '>' : '<');
  const from = after ? sql` AND (${col}, c.id) ${cmp} ((${after.k}::timestamp AT TIME ZONE 'UTC'), ${after.id}::uuid)` : sql``;
  return rows<InboxRow>(
    db,
    sql`
    SELECT c.id, c.title, c.status, c.handled_by, c.assignee_id, au.email AS assignee, au.name AS assignee_name, c.channel_id,
      CASE WHEN c.visitor_id LIKE 'email:%' THEN c.visitor_email END AS email_from,
      ${utcText(sql`c.waiting_since`)} AS waiting_since, ${utcText(sql`c.resolved_at`)} AS resolved_at,
      ${utcText(sql`c.snoozed_until`)} AS snoozed_until, ${utcText(sql`c.created_at`)} AS created_at,
      ${utcText(sql`c.updated_at`)} AS updated_at, c.csat, ${preciseUtcText(col)} AS sort_k,
      (SELECT x.text FROM (
        (SELECT m.text, m.created_at FROM conversation_messages m WHERE m.conversation_id = c.id AND m.author IN ('visitor', 'agent')
          ORDER BY m.created_at DESC LIMIT 1)
        UNION ALL
        (SELECT r.question, r.created_at FROM responses r WHERE r.conversation_id = c.id ORDER BY r.created_at DESC LIMIT 1)
      ) x ORDER BY x.created_at DESC LIMIT 1) AS preview
    FROM conversations c LEFT JOIN admin_users au ON au.id = c.assignee_id
    WHERE c.account_id = ${accountId} AND ${v.where}${from}
    ORDER BY ${col} ${d}, c.id ${d} LIMIT ${limit}`,
  );
}

export type InboxCounts = Record<InboxView, number>;

/**
 * The five views' counts in one statement, from conversation_counts (kept exact by the triggers of
 * migration 0015, whatever writes a conversation): a few rows per account, never the conversations.
 */
export async function countInboxViews(db: Db, accountId: number, memberId: number): Promise<InboxCounts> {
  const [row] = await rows<InboxCounts>(
    db,
    sql`
    SELECT COALESCE(sum(n) FILTER (WHERE status = 'Waiting'), 0)::int AS waiting,
      COALESCE(sum(n) FILTER (WHERE status IN ('Open', 'Waiting', 'Snoozed') AND assignee_id = ${memberId}), 0)::int AS mine,
      COALESCE(sum(n) FILTER (WHERE status IN ('Open', 'Waiting', 'Snoozed') AND handled_by = 'human' AND assignee_id = 0), 0)::int AS unassigned,
      COALESCE(sum(n) FILTER (WHERE status = 'Open'), 0)::int AS all_open,
      COALESCE(sum(n) FILTER (WHERE status = 'Resolved'), 0)::int AS resolved
    FROM conversation_counts WHERE account_id = ${accountId}`,
  );
  return row!;
}

/** The counts every member shares, and "Mine" per assignee (user id → count): what a change pushes to the account's members. */
export type AccountInboxCounts = Omit<InboxCounts, 'mine'> & { mine: Record<string, number> };

/** countInboxViews for the whole account at once, from conversation_counts (one statement, a few rows). */
export async function countAccountInboxViews(db: Db, accountId: number): Promise<AccountInboxCounts> {
  const [row] = await rows<AccountInboxCounts>(
    db,
    sql`
    SELECT COALESCE(sum(n) FILTER (WHERE status = 'Waiting'), 0)::int AS waiting,
      COALESCE(sum(n) FILTER (WHERE status IN ('Open', 'Waiting', 'Snoozed') AND handled_by = 'human' AND assignee_id = 0), 0)::int AS unassigned,
      COALESCE(sum(n) FILTER (WHERE status = 'Open'), 0)::int AS all_open,
      COALESCE(sum(n) FILTER (WHERE status = 'Resolved'), 0)::int AS resolved,
      (SELECT COALESCE(json_object_agg(m.assignee_id, m.n), '{}'::json) FROM (
        SELECT assignee_id, sum(n)::int AS n FROM conversation_counts
        WHERE account_id = ${accountId} AND status IN ('Open', 'Waiting', 'Snoozed') AND assignee_id <> 0 GROUP BY assignee_id) m) AS mine
    FROM conversation_counts WHERE account_id = ${accountId}`,
  );
  const mine = typeof row!.mine === 'string' ? (JSON.parse(row!.mine) as Record<string, number>) : row!.mine;
  return { ...row!, mine };
}

export type SummaryTurn = { question: string; answer: string; declined: boolean; error: string | null; sources: unknown; created_at: string };

/** The conversation's first `first` and last `last` responses (oldest first), for the inbox's summary. */
export async function listSummaryTurns(db: Db, accountId: number, conversationId: string, first: number, last: number): Promise<SummaryTurn[]> {
  const cols = sql`r.id, r.question, r.answer, r.declined, r.error, r.sources, ${utcText(sql`r.created_at`)} AS created_at, r.created_at AS at`;
  const result = await rows<SummaryTurn & { id: string; at: unknown }>(
    db,
    sql`
    SELECT DISTINCT ON (x.at, x.id) x.* FROM (
      (SELECT ${cols} FROM responses r WHERE r.account_id = ${accountId} AND r.conversation_id = ${conversationId} ORDER BY r.created_at, r.id LIMIT ${first})
      UNION ALL
      (SELECT ${cols} FROM responses r WHERE r.account_id = ${accountId} AND r.conversation_id = ${conversationId} ORDER BY r.created_at DESC, r.id DESC LIMIT ${last})
    ) x ORDER BY x.at, x.id`,
  );
  return result.map(({ id: _id, at: _at, ...t }) => ({ ...t, sources: typeof t.sources === 'string' ? JSON.parse(t.sources) : t.sources }));
}
