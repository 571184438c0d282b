import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { preciseUtcText, utcText } from './shared';

/**
 * Human handoff (docs/decisions/handoff.md): a conversation's handoff state, its messages that are
 * not halves of a response, and the members who act on it (availability, the inbox and canned
 * replies have files of their own). Every query takes the account (tenancy); the service decides,
 * these only read and write.
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
