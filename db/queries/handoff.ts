import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { preciseUtcText, utcText } from './shared';

/**
 * Human handoff (docs/decisions/handoff.md): a conversation's handoff state, its messages that are
 * not halves of a response, the inbox's views, handoff settings, canned replies and members'
 * availability. Every query takes the account (tenancy); the service decides, these only read and write.
 */

/** A conversation's handoff state, locked for the transaction (the transition table reads it). */
export type HandoffStateRow = {
  id: string;
  /** The visitor's first question: what a member's notification of a new Waiting conversation says. */
  title: string;
  status: string;
  handled_by: 'ai' | 'human';
  assignee_id: number | null;
  waiting: boolean;
  csat: number | null;
  visitor_email: string | null;
  assignee_name: string | null;
  assignee_email: string | null;
  /** Milliseconds since the epoch, or null. */
  snoozed_until_ms: number | null;
};

/**
 * Locks the row, then reads it with the assignee in a second statement: a locking read that waited
 * for another writer re-reads the row but not its join (the winner's name would read as null).
 */
export async function lockConversationState(tx: Db, accountId: number, conversationId: string): Promise<HandoffStateRow | null> {
  const locked = await rows<{ id: string }>(tx, sql`SELECT id FROM conversations WHERE id = ${conversationId} AND account_id = ${accountId} FOR UPDATE`);
  if (locked.length === 0) return null;
  const [row] = await rows<HandoffStateRow>(
    tx,
    sql`
    SELECT c.id, c.title, c.status, c.handled_by, c.assignee_id, c.waiting_since IS NOT NULL AS waiting, c.csat, c.visitor_email,
      au.name AS assignee_name, au.email AS assignee_email, (extract(epoch FROM c.snoozed_until) * 1000)::float8 AS snoozed_until_ms
    FROM conversations c LEFT JOIN admin_users au ON au.id = c.assignee_id
    WHERE c.id = ${conversationId} AND c.account_id = ${accountId}`,
  );
  if (row && row.snoozed_until_ms !== null) row.snoozed_until_ms = Number(row.snoozed_until_ms);
  return row ?? null;
}

export type StateWrite = {
  status: string;
  handled_by: 'ai' | 'human';
  assignee_id: number | null;
  waiting: 'set' | 'clear' | 'keep';
  handed_off: boolean;
  replied: boolean;
  /** Only with status Snoozed: the new time (null keeps the one set). */
  snoozed_until: string | null;
};

/**
 * Writes a transition. The `from` condition rides on the UPDATE (status and assignee as read), so
 * of two writers that raced past their reads exactly one row update wins; false: the row moved.
 * resolved_at is set on Resolved and cleared otherwise; snoozed_until lives only while Snoozed.
 */
export async function writeConversationState(
  tx: Db,
  accountId: number,
  conversationId: string,
  from: { status: string; assignee_id: number | null },
  to: StateWrite,
): Promise<boolean> {
  const done = await rows<{ id: string }>(
    tx,
    sql`
    UPDATE conversations SET status = ${to.status}, handled_by = ${to.handled_by}, assignee_id = ${to.assignee_id}::int,
      waiting_since = CASE ${to.waiting}::text WHEN 'set' THEN now() WHEN 'clear' THEN NULL ELSE waiting_since END,
      handed_off_at = CASE WHEN ${to.handed_off}::boolean THEN COALESCE(handed_off_at, now()) ELSE handed_off_at END,
      first_reply_at = CASE WHEN ${to.replied}::boolean THEN COALESCE(first_reply_at, now()) ELSE first_reply_at END,
      resolved_at = CASE WHEN ${to.status} = 'Resolved' THEN now() ELSE NULL END,
      snoozed_until = CASE WHEN ${to.status} = 'Snoozed' THEN COALESCE(${to.snoozed_until}::timestamptz, snoozed_until) ELSE NULL END,
      updated_at = now()
    WHERE id = ${conversationId} AND account_id = ${accountId} AND status = ${from.status}
      AND assignee_id IS NOT DISTINCT FROM ${from.assignee_id}::int
    RETURNING id`,
  );
  return done.length > 0;
}

/** A stored message that is not half of a response; `sort_at` orders it among the responses (microseconds). */
export type StoredMessageRow = {
  id: string;
  author: 'visitor' | 'agent' | 'system' | 'note';
  author_name: string | null;
  text: string;
  client_message_id: string | null;
  created_at: string;
  sort_at: string;
  seq: number;
};

const MESSAGE_COLUMNS = (alias: string) => {
  const a = sql.raw(alias);
  return sql`${a}.id, ${a}.author, ${a}.author_name, ${a}.text, ${a}.client_message_id,
    ${utcText(sql`${a}.created_at`)} AS created_at, ${preciseUtcText(sql`${a}.created_at`)} AS sort_at, ${a}.seq::float8 AS seq`;
};

/**
 * Whose `client_message_id`s share one unique index (migration 0023): a visitor's and the
 * members' (replies and notes) are separate, so neither side can claim the other's id.
 */
export type ClientIdScope = 'visitor' | 'member';
const clientIdScope = (scope: ClientIdScope) => (scope === 'visitor' ? sql`author = 'visitor'` : sql`author IN ('agent', 'note')`);

/**
 * Stores a message and moves the conversation's updated_at, in one statement. Its time is the
 * clock's, not the transaction's: a take-over's "joined" line and the reply after it differ. A retry
 * (same client_message_id, same scope) stores nothing and returns null; read the first with getMessageByClientId.
 */
export async function insertConversationMessage(
  tx: Db,
  accountId: number,
  conversationId: string,
  m: { author: StoredMessageRow['author']; authorUserId: number | null; authorName: string | null; text: string; clientMessageId: string | null },
): Promise<StoredMessageRow | null> {
  const [row] = await rows<StoredMessageRow>(
    tx,
    sql`
    WITH m AS (
      INSERT INTO conversation_messages (account_id, conversation_id, author, author_user_id, author_name, text, client_message_id, created_at)
      VALUES (${accountId}, ${conversationId}, ${m.author}, ${m.authorUserId}::int, ${m.authorName}, ${m.text}, ${m.clientMessageId}, clock_timestamp())
      ON CONFLICT (conversation_id, client_message_id) WHERE ${clientIdScope(m.author === 'visitor' ? 'visitor' : 'member')} DO NOTHING RETURNING *
    ), u AS (
      UPDATE conversations SET updated_at = now() WHERE id = ${conversationId} AND account_id = ${accountId} AND EXISTS (SELECT 1 FROM m) RETURNING id
    )
    SELECT ${MESSAGE_COLUMNS('m')} FROM m`,
  );
  return row ?? null;
}

/** The client_message_ids of one member's newest replies and notes in a conversation (their page settles what it was still sending). */
export async function memberClientIdsOf(db: Db, accountId: number, conversationId: string, userId: number, limit = 100): Promise<string[]> {
  const found = await rows<{ client_message_id: string }>(
    db,
    sql`
    SELECT client_message_id FROM conversation_messages
    WHERE account_id = ${accountId} AND conversation_id = ${conversationId} AND author_user_id = ${userId}
      AND client_message_id IS NOT NULL AND ${clientIdScope('member')}
    ORDER BY created_at DESC LIMIT ${limit}`,
  );
  return found.map((r) => r.client_message_id);
}

export async function getMessageByClientId(
  db: Db,
  accountId: number,
  conversationId: string,
  clientMessageId: string,
  scope: ClientIdScope,
): Promise<(StoredMessageRow & { author_user_id: number | null }) | null> {
  const [row] = await rows<StoredMessageRow & { author_user_id: number | null }>(
    db,
    sql`
    SELECT ${MESSAGE_COLUMNS('m')}, m.author_user_id FROM conversation_messages m
    WHERE m.account_id = ${accountId} AND m.conversation_id = ${conversationId} AND m.client_message_id = ${clientMessageId}
      AND m.${clientIdScope(scope)}`,
  );
  return row ?? null;
}

/**
 * A conversation's stored messages, oldest first (created_at, seq). `withNotes` false for anything
 * a visitor reads. For a page of the widget's history: `after` (a sort_at, exclusive) and
 * `beforeResponseId` (older than that response).
 */
export async function listConversationMessages(
  db: Db,
  accountId: number,
  conversationId: string,
  o: { withNotes: boolean; after?: string | null; beforeResponseId?: string | null; ids?: string[] },
): Promise<StoredMessageRow[]> {
  const conds: SQL[] = [sql`m.account_id = ${accountId}`, sql`m.conversation_id = ${conversationId}`];
  if (!o.withNotes) conds.push(sql`m.author <> 'note'`);
  if (o.ids) conds.push(sql`m.id = ANY(${sql.param(o.ids)}::uuid[])`);
  if (o.after) conds.push(sql`m.created_at > (${o.after}::timestamp AT TIME ZONE 'UTC')`);
  if (o.beforeResponseId) {
    conds.push(sql`m.created_at < (SELECT created_at FROM responses WHERE id = ${o.beforeResponseId} AND conversation_id = ${conversationId})`);
  }
  return rows<StoredMessageRow>(
    db,
    sql`SELECT ${MESSAGE_COLUMNS('m')} FROM conversation_messages m WHERE ${sql.join(conds, sql` AND `)} ORDER BY m.created_at, m.seq`,
  );
}

/** The visitor's first and latest stored messages (one row when there is one), oldest first. */
export async function listVisitorMessageEnds(db: Db, accountId: number, conversationId: string): Promise<StoredMessageRow[]> {
  const of = (order: SQL) => sql`(SELECT ${MESSAGE_COLUMNS('m')} FROM conversation_messages m
    WHERE m.account_id = ${accountId} AND m.conversation_id = ${conversationId} AND m.author = 'visitor' ORDER BY ${order} LIMIT 1)`;
  const found = await rows<StoredMessageRow>(db, sql`${of(sql`m.created_at, m.seq`)} UNION ${of(sql`m.created_at DESC, m.seq DESC`)}`);
  return found.sort((a, b) => (a.sort_at < b.sort_at ? -1 : a.sort_at > b.sort_at ? 1 : a.seq - b.seq));
}

/** Marks the visitor-facing messages (agent, system) as shown; `ids` null: all of the conversation. Returns how many. */
export async function markConversationMessagesSeen(db: Db, accountId: number, conversationId: string, ids: string[] | null): Promise<number> {
  const only = ids ? sql` AND id = ANY(${sql.param(ids)}::uuid[])` : sql``;
  const done = await rows<{ id: string }>(
    db,
    sql`
    UPDATE conversation_messages SET seen_at = now()
    WHERE account_id = ${accountId} AND conversation_id = ${conversationId} AND author IN ('agent', 'system') AND seen_at IS NULL${only}
    RETURNING id`,
  );
  return done.length;
}

/** Sets the rating once (csat still null); null when there was one already or no such conversation. */
export async function setConversationRating(
  tx: Db,
  accountId: number,
  conversationId: string,
  rating: number,
  comment: string | null,
): Promise<{ handled_by: 'ai' | 'human' } | null> {
  const [row] = await rows<{ handled_by: 'ai' | 'human' }>(
    tx,
    sql`
    UPDATE conversations SET csat = ${rating}, csat_comment = ${comment}, updated_at = now()
    WHERE id = ${conversationId} AND account_id = ${accountId} AND csat IS NULL RETURNING handled_by`,
  );
  return row ?? null;
}

export async function setConversationVisitorEmail(db: Db, accountId: number, conversationId: string, email: string): Promise<boolean> {
  const done = await rows<{ id: string }>(
    db,
    sql`UPDATE conversations SET visitor_email = ${email} WHERE id = ${conversationId} AND account_id = ${accountId} RETURNING id`,
  );
  return done.length > 0;
}

/** Snoozed conversations whose time has come by `now` (ISO 8601), oldest first (the sweeper wakes each in its own transaction). */
export async function listDueSnoozed(db: Db, now: string, limit: number): Promise<Array<{ id: string; account_id: number }>> {
  return rows(
    db,
    sql`
    SELECT id, account_id FROM conversations WHERE status = 'Snoozed' AND snoozed_until <= ${now}::timestamptz
    ORDER BY snoozed_until LIMIT ${limit}`,
  );
}

// ---- members

export type MemberRow = { id: number; name: string; email: string; availability: 'online' | 'away'; dashboard_seen_at: string | null };

export async function getAccountMember(db: Db, accountId: number, userId: number): Promise<MemberRow | null> {
  const [row] = await rows<MemberRow>(
    db,
    sql`
    SELECT id, name, email, availability, ${utcText(sql`dashboard_seen_at`)} AS dashboard_seen_at
    FROM admin_users WHERE id = ${userId} AND account_id = ${accountId}`,
  );
  return row ?? null;
}

export async function setMemberAvailability(db: Db, accountId: number, userId: number, availability: 'online' | 'away'): Promise<boolean> {
  const done = await rows<{ id: number }>(
    db,
    sql`UPDATE admin_users SET availability = ${availability} WHERE id = ${userId} AND account_id = ${accountId} RETURNING id`,
  );
  return done.length > 0;
}

export async function touchMemberDashboard(db: Db, accountId: number, userId: number): Promise<boolean> {
  const done = await rows<{ id: number }>(
    db,
    sql`UPDATE admin_users SET dashboard_seen_at = now() WHERE id = ${userId} AND account_id = ${accountId} RETURNING id`,
  );
  return done.length > 0;
}

/** The visitor's messages in a conversation: its questions (responses) and its stored messages to the team. */
export async function countVisitorMessages(db: Db, accountId: number, conversationId: string): Promise<number> {
  const [row] = await rows<{ n: number }>(
    db,
    sql`
    SELECT (c.response_count + (SELECT count(*) FROM conversation_messages m
      WHERE m.account_id = ${accountId} AND m.conversation_id = ${conversationId} AND m.author = 'visitor'))::int AS n
    FROM conversations c WHERE c.id = ${conversationId} AND c.account_id = ${accountId}`,
  );
  return row?.n ?? 0;
}

/** Members `online` with a dashboard seen within `withinSeconds`. */
export async function countOnlineMembers(db: Db, accountId: number, withinSeconds: number): Promise<number> {
  const [row] = await rows<{ online: number }>(
    db,
    sql`
    SELECT count(*)::int AS online FROM admin_users WHERE account_id = ${accountId} AND availability = 'online'
      AND dashboard_seen_at >= now() - make_interval(secs => ${withinSeconds})`,
  );
  return row?.online ?? 0;
}

/** The latest `limit` first responses after a handoff within `days`: when the handoff was (UTC text) and how long the reply took. */
export async function listFirstResponses(db: Db, accountId: number, days: number, limit: number): Promise<Array<{ at: string; seconds: number }>> {
  return rows<{ at: string; seconds: number }>(
    db,
    sql`
    SELECT ${utcText(sql`handed_off_at`)} AS at, extract(epoch FROM first_reply_at - handed_off_at)::float8 AS seconds
    FROM conversations WHERE account_id = ${accountId} AND first_reply_at IS NOT NULL
      AND handed_off_at >= now() - make_interval(days => ${days}) ORDER BY handed_off_at DESC LIMIT ${limit}`,
  );
}

// ---- handoff settings

export type HandoffSettingsRow = { enabled: boolean; time_zone: string; hours: unknown; away_text: string };

export async function getHandoffSettingsRow(db: Db, accountId: number): Promise<HandoffSettingsRow | null> {
  const [row] = await rows<HandoffSettingsRow>(db, sql`SELECT enabled, time_zone, hours, away_text FROM handoff_settings WHERE account_id = ${accountId}`);
  if (row && typeof row.hours === 'string') row.hours = JSON.parse(row.hours);
  return row ?? null;
}

export async function upsertHandoffSettings(db: Db, accountId: number, s: HandoffSettingsRow): Promise<void> {
  await db.execute(sql`
    INSERT INTO handoff_settings (account_id, enabled, time_zone, hours, away_text, updated_at)
    VALUES (${accountId}, ${s.enabled}, ${s.time_zone}, ${JSON.stringify(s.hours)}::jsonb, ${s.away_text}, now())
    ON CONFLICT (account_id) DO UPDATE SET enabled = EXCLUDED.enabled, time_zone = EXCLUDED.time_zone,
      hours = EXCLUDED.hours, away_text = EXCLUDED.away_text, updated_at = now()`);
}

// ---- canned replies

export type CannedReplyRow = { id: string; shortcut: string; text: string; created_at: string; updated_at: string };
const CANNED_COLUMNS = sql`id, shortcut, text, ${utcText(sql`created_at`)} AS created_at, ${utcText(sql`updated_at`)} AS updated_at`;

export async function listCannedReplyRows(db: Db, accountId: number): Promise<CannedReplyRow[]> {
  return rows(db, sql`SELECT ${CANNED_COLUMNS} FROM canned_replies WHERE account_id = ${accountId} ORDER BY shortcut`);
}

/** Null: the shortcut is taken in this account. */
export async function insertCannedReply(db: Db, accountId: number, r: { shortcut: string; text: string }): Promise<CannedReplyRow | null> {
  const [row] = await rows<CannedReplyRow>(
    db,
    sql`
    INSERT INTO canned_replies (account_id, shortcut, text) VALUES (${accountId}, ${r.shortcut}, ${r.text})
    ON CONFLICT (account_id, shortcut) DO NOTHING RETURNING ${CANNED_COLUMNS}`,
  );
  return row ?? null;
}

/** 'missing': no such reply in the account; 'taken': another reply has the shortcut. */
export async function updateCannedReplyRow(
  db: Db,
  accountId: number,
  id: string,
  r: { shortcut: string; text: string },
): Promise<CannedReplyRow | 'missing' | 'taken'> {
  const [clash] = await rows<{ id: string }>(
    db,
    sql`SELECT id FROM canned_replies WHERE account_id = ${accountId} AND shortcut = ${r.shortcut} AND id <> ${id}`,
  );
  if (clash) return 'taken';
  const [row] = await rows<CannedReplyRow>(
    db,
    sql`
    UPDATE canned_replies SET shortcut = ${r.shortcut}, text = ${r.text}, updated_at = now()
    WHERE id = ${id} AND account_id = ${accountId} RETURNING ${CANNED_COLUMNS}`,
  );
  return row ?? 'missing';
}

export async function deleteCannedReplyRow(db: Db, accountId: number, id: string): Promise<boolean> {
  const done = await rows<{ id: string }>(db, sql`DELETE FROM canned_replies WHERE id = ${id} AND account_id = ${accountId} RETURNING id`);
  return done.length > 0;
}

// ---- the inbox

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

// ---- summary

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
