import { type SQL, sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/** The conversations of a visitor: by email (that visitor_email, and every conversation of a visitor_id that ever gave it) or by visitor_id. */
export type VisitorRef = { email: string } | { visitorId: string };

const uuidArray = (ids: string[]) => sql`${`{${ids.join(',')}}`}::uuid[]`;

/** The account's retention in days (null: off); undefined when there is no such account. */
export async function getRetentionDays(db: Db, accountId: number): Promise<number | null | undefined> {
  const [row] = await rows<{ retention_days: number | null }>(db, sql`SELECT retention_days FROM accounts WHERE id = ${accountId}`);
  return row === undefined ? undefined : row.retention_days;
}

/** Sets the account's retention (null: off); false when there is no such account. */
export async function setRetentionDays(db: Db, accountId: number, days: number | null): Promise<boolean> {
  const done = await rows<{ id: number }>(db, sql`UPDATE accounts SET retention_days = ${days} WHERE id = ${accountId} RETURNING id`);
  return done.length > 0;
}

/** Every account with retention on, by id (the job's round). */
export async function listRetentionAccounts(db: Db): Promise<Array<{ id: number; retention_days: number }>> {
  return rows(db, sql`SELECT id, retention_days FROM accounts WHERE retention_days IS NOT NULL ORDER BY id`);
}

/**
 * Up to `limit` of the account's conversations whose last change (updated_at: the last message,
 * or a status change after it) is older than `days`, oldest first, locked for this transaction;
 * rows another transaction holds are skipped, so two instances never take the same conversation.
 */
export async function claimExpiredConversations(tx: Db, accountId: number, days: number, limit: number): Promise<string[]> {
  const found = await rows<{ id: string }>(
    tx,
    sql`
    SELECT id FROM conversations
    WHERE account_id = ${accountId} AND updated_at < now() - make_interval(days => ${days}::int)
    ORDER BY updated_at, id LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`,
  );
  return found.map((r) => r.id);
}

function visitorConversations(accountId: number, who: VisitorRef): SQL {
  if ('visitorId' in who) return sql`SELECT id FROM conversations WHERE account_id = ${accountId} AND visitor_id = ${who.visitorId}`;
  return sql`
    WITH direct AS (SELECT id, visitor_id FROM conversations WHERE account_id = ${accountId} AND lower(visitor_email) = lower(${who.email}) AND visitor_email IS NOT NULL)
    SELECT id FROM direct
    UNION
    SELECT c.id FROM conversations c
    WHERE c.account_id = ${accountId} AND c.visitor_id IN (SELECT visitor_id FROM direct WHERE visitor_id IS NOT NULL)`;
}

/** How many conversations the visitor has in the account, and the visitor ids and emails on them. */
export async function summarizeVisitor(
  db: Db,
  accountId: number,
  who: VisitorRef,
): Promise<{ conversations: number; visitor_ids: string[]; emails: string[] }> {
  const [row] = await rows<{ conversations: number; visitor_ids: string[]; emails: string[] }>(
    db,
    sql`
    WITH v AS (${visitorConversations(accountId, who)})
    SELECT count(*)::int AS conversations,
      COALESCE(array_agg(DISTINCT c.visitor_id) FILTER (WHERE c.visitor_id IS NOT NULL), '{}') AS visitor_ids,
      COALESCE(array_agg(DISTINCT lower(c.visitor_email)) FILTER (WHERE c.visitor_email IS NOT NULL), '{}') AS emails
    FROM conversations c WHERE c.account_id = ${accountId} AND c.id IN (SELECT id FROM v)`,
  );
  return row ?? { conversations: 0, visitor_ids: [], emails: [] };
}

/** The visitor's conversation ids after `after` (by id), up to `limit`: the export's and the erasure's pages. */
export async function listVisitorConversationIds(db: Db, accountId: number, who: VisitorRef, after: string | null, limit: number): Promise<string[]> {
  const found = await rows<{ id: string }>(
    db,
    sql`
    SELECT id FROM (${visitorConversations(accountId, who)}) v
    ${after === null ? sql`` : sql`WHERE id > ${after}::uuid`}
    ORDER BY id LIMIT ${limit}`,
  );
  return found.map((r) => r.id);
}

/** Locks up to `limit` of the visitor's conversations for this transaction (waiting for a writer in flight). */
export async function lockVisitorConversations(tx: Db, accountId: number, who: VisitorRef, limit: number): Promise<string[]> {
  const found = await rows<{ id: string }>(
    tx,
    sql`
    SELECT id FROM conversations
    WHERE account_id = ${accountId} AND id IN (${visitorConversations(accountId, who)})
    ORDER BY id LIMIT ${limit}
    FOR UPDATE`,
  );
  return found.map((r) => r.id);
}

export type DeletedRows = { conversations: number; responses: number; uploads: number; webhooks: number; storage_names: string[] };

/**
 * Deletes these conversations of the account (locked by the caller's transaction) with every row
 * about them, in one statement: responses and their feedback, comments and email outcomes; stored
 * messages, events, answers in flight; uploads (their bytes cascade with upload_chunks) and the
 * documents made of them; mails (sent or not) and received mails of them; their webhook events and
 * deliveries. Then one `conversation.deleted` event per conversation is queued for the endpoints
 * subscribed to it, and the account's and channels' counters are lowered. Foreign keys are checked
 * at the end of the statement, after every part has run.
 */
export async function deleteConversationRows(tx: Db, accountId: number, ids: string[], reason: 'retention' | 'erasure', at: string): Promise<DeletedRows> {
  const set = uuidArray(ids);
  const [row] = await rows<DeletedRows>(
    tx,
    sql`
    WITH c AS (
      SELECT id, channel_id FROM conversations WHERE account_id = ${accountId} AND id = ANY(${set})
    ), r AS (
      SELECT id FROM responses WHERE account_id = ${accountId} AND conversation_id = ANY(${set})
    ), ep AS (
      SELECT id, paused_at FROM webhook_endpoints WHERE account_id = ${accountId} AND 'conversation.deleted' = ANY(events) FOR SHARE
    ), ev AS (
      INSERT INTO webhook_events (id, account_id, type, conversation_id, body)
      SELECT 'msg_' || replace(gen_random_uuid()::text, '-', ''), ${accountId}, 'conversation.deleted', c.id,
        '{"type":"conversation.deleted","timestamp":"' || ${at}::text || '","data":{"conversation_id":"' || c.id::text || '","reason":"' || ${reason}::text || '"}}'
      FROM c WHERE EXISTS (SELECT 1 FROM ep)
      RETURNING id, seq, conversation_id
    ), dl AS (
      INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, conversation_id, event_seq, status, next_attempt_at)
      SELECT ${accountId}, ep.id, ev.id, ev.conversation_id, ev.seq, CASE WHEN ep.paused_at IS NULL THEN 'pending' ELSE 'held' END, now()
      FROM ev CROSS JOIN ep
      RETURNING 1
    ), d_feedback AS (
      DELETE FROM response_feedback WHERE response_id IN (SELECT id FROM r) RETURNING 1
    ), d_comments AS (
      DELETE FROM response_comments WHERE response_id IN (SELECT id FROM r) RETURNING 1
    ), d_email_answers AS (
      DELETE FROM email_answers WHERE account_id = ${accountId} AND response_id IN (SELECT id FROM r) RETURNING 1
    ), d_answers AS (
      DELETE FROM chat_answers WHERE conversation_id = ANY(${set}) RETURNING 1
    ), d_events AS (
      DELETE FROM conversation_events WHERE conversation_id = ANY(${set}) RETURNING 1
    ), d_messages AS (
      DELETE FROM conversation_messages WHERE conversation_id = ANY(${set}) RETURNING 1
    ), d_documents AS (
      DELETE FROM kb_documents WHERE account_id = ${accountId} AND conversation_id = ANY(${set}) RETURNING 1
    ), d_uploads AS (
      DELETE FROM attachments WHERE account_id = ${accountId} AND conversation_id = ANY(${set}) RETURNING storage_name
    ), d_mails AS (
      DELETE FROM mails WHERE account_id = ${accountId} AND conversation_id = ANY(${set}) RETURNING 1
    ), d_inbound AS (
      DELETE FROM inbound_mails WHERE account_id = ${accountId} AND conversation_id = ANY(${set}) RETURNING 1
    ), d_webhooks AS (
      DELETE FROM webhook_events WHERE conversation_id = ANY(${set}) RETURNING 1
    ), d_responses AS (
      DELETE FROM responses WHERE id IN (SELECT id FROM r) RETURNING channel_id
    ), d_conversations AS (
      DELETE FROM conversations WHERE id IN (SELECT id FROM c) RETURNING channel_id
    ), per_channel AS (
      SELECT channel_id, sum(nc)::int AS nc, sum(nr)::int AS nr FROM (
        SELECT channel_id, 1 AS nc, 0 AS nr FROM d_conversations UNION ALL SELECT channel_id, 0, 1 FROM d_responses
      ) x GROUP BY channel_id
    ), up_channels AS (
      UPDATE channels ch SET conversation_count = ch.conversation_count - p.nc, response_count = ch.response_count - p.nr
      FROM per_channel p WHERE ch.account_id = ${accountId} AND ch.id = p.channel_id RETURNING 1
    ), up_account AS (
      UPDATE accounts SET conversation_count = conversation_count - (SELECT count(*) FROM d_conversations),
        response_count = response_count - (SELECT count(*) FROM d_responses)
      WHERE id = ${accountId} AND EXISTS (SELECT 1 FROM d_conversations) RETURNING 1
    )
    SELECT (SELECT count(*) FROM d_conversations)::int AS conversations, (SELECT count(*) FROM d_responses)::int AS responses,
      (SELECT count(*) FROM d_uploads)::int AS uploads, (SELECT count(*) FROM dl)::int AS webhooks,
      COALESCE((SELECT array_agg(storage_name) FROM d_uploads WHERE storage_name IS NOT NULL), '{}') AS storage_names`,
  );
  return row ?? { conversations: 0, responses: 0, uploads: 0, webhooks: 0, storage_names: [] };
}

/** The visitor's likes and dislikes and comments on the answers of these conversations (the export). */
export async function listVisitorFeedback(
  db: Db,
  accountId: number,
  conversationId: string,
): Promise<{
  feedback: Array<{ response_id: string; value: number; created_at: string }>;
  comments: Array<{ response_id: string; body: string; created_at: string }>;
  csat_comment: string | null;
}> {
  const [row] = await rows<{
    feedback: Array<{ response_id: string; value: number; created_at: string }>;
    comments: Array<{ response_id: string; body: string; created_at: string }>;
    csat_comment: string | null;
  }>(
    db,
    sql`
    SELECT
      (SELECT COALESCE(json_agg(json_build_object('response_id', f.response_id, 'value', f.value,
          'created_at', ${utcText(sql`f.created_at`)}) ORDER BY f.created_at, f.response_id), '[]'::json)
        FROM response_feedback f JOIN responses r ON r.id = f.response_id
        WHERE r.account_id = ${accountId} AND r.conversation_id = ${conversationId}) AS feedback,
      (SELECT COALESCE(json_agg(json_build_object('response_id', m.response_id, 'body', m.body,
          'created_at', ${utcText(sql`m.created_at`)}) ORDER BY m.created_at, m.id), '[]'::json)
        FROM response_comments m JOIN responses r ON r.id = m.response_id
        WHERE r.account_id = ${accountId} AND r.conversation_id = ${conversationId}) AS comments,
      (SELECT csat_comment FROM conversations WHERE account_id = ${accountId} AND id = ${conversationId}) AS csat_comment`,
  );
  const parse = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
  return row
    ? { feedback: parse(row.feedback), comments: parse(row.comments), csat_comment: row.csat_comment }
    : { feedback: [], comments: [], csat_comment: null };
}

/** The uploads of a conversation as the export lists them (metadata only). */
export async function listConversationUploads(
  db: Db,
  accountId: number,
  conversationId: string,
): Promise<Array<{ filename: string; content_type: string; size: number; created_at: string }>> {
  return rows(
    db,
    sql`
    SELECT filename, content_type, size, ${utcText(sql`created_at`)} AS created_at
    FROM attachments WHERE account_id = ${accountId} AND conversation_id = ${conversationId} AND status = 'complete'
    ORDER BY created_at, id`,
  );
}
