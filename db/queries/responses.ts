import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { containsPattern, direction, inList, utcText, type PageWindow } from './shared';

export type ResponseRow = {
  id: string; conversation_id: string; channel_id: number; question: string; answer: string;
  likes: number; dislikes: number; comments: number; created_at: string;
};

export const RESPONSE_SORT_COLUMNS = {
  created_at: 'created_at', response_id: 'id', id: 'id', channel_id: 'channel_id',
  conversation_id: 'conversation_id', likes: 'likes', dislikes: 'dislikes', comments: 'comments',
} as const;
export type ResponseSortKey = keyof typeof RESPONSE_SORT_COLUMNS;

export type ResponseFilter = { channelIds: number[]; conversationId?: string; query?: string };

const COLUMNS = sql`r.id, r.conversation_id, r.channel_id, r.question, r.answer, r.likes, r.dislikes,
  r.comments, ${utcText(sql`r.created_at`)} AS created_at`;

function whereOf(accountId: number, f: ResponseFilter): SQL {
  const conds: SQL[] = [sql`r.account_id = ${accountId}`];
  if (f.channelIds.length > 0) conds.push(sql`r.channel_id IN (${inList(f.channelIds)})`);
  if (f.conversationId) conds.push(sql`r.conversation_id = ${f.conversationId}`);
  if (f.query) {
    const p = containsPattern(f.query);
    conds.push(sql`(r.question ILIKE ${p} OR r.answer ILIKE ${p})`);
  }
  return sql.join(conds, sql` AND `);
}

/**
 * A page of the account's responses in a total order (ties broken by id in the same direction).
 * The page's ids are found first, on an index where possible, and only those rows are read.
 */
export async function listResponses(db: Db, accountId: number, f: ResponseFilter, sortKey: ResponseSortKey, w: PageWindow): Promise<ResponseRow[]> {
  const col = sql.raw(RESPONSE_SORT_COLUMNS[sortKey]);
  const dir = direction(w.direction);
  const order = RESPONSE_SORT_COLUMNS[sortKey] === 'id' ? sql`p.id ${dir}` : sql`p.k ${dir}, p.id ${dir}`;
  const innerOrder = RESPONSE_SORT_COLUMNS[sortKey] === 'id' ? sql`r.id ${dir}` : sql`r.${col} ${dir}, r.id ${dir}`;
  return rows<ResponseRow>(db, sql`
    SELECT ${COLUMNS} FROM (
      SELECT r.id, r.${col} AS k FROM responses r WHERE ${whereOf(accountId, f)}
      ORDER BY ${innerOrder} LIMIT ${w.limit} OFFSET ${w.offset}
    ) p JOIN responses r ON r.id = p.id
    ORDER BY ${order}`);
}

/**
 * Exact total for a filter. Unfiltered, per-channel and per-conversation totals come from
 * counters kept exact by every writer, so page 1 costs no scan; only text search counts rows.
 */
export async function countResponses(db: Db, accountId: number, f: ResponseFilter): Promise<number> {
  let q: SQL;
  if (f.query) {
    q = sql`SELECT count(*)::int AS n FROM responses r WHERE ${whereOf(accountId, f)}`;
  } else if (f.conversationId) {
    const channelCond = f.channelIds.length > 0 ? sql` AND channel_id IN (${inList(f.channelIds)})` : sql``;
    q = sql`SELECT COALESCE(SUM(response_count), 0)::int AS n FROM conversations
            WHERE id = ${f.conversationId} AND account_id = ${accountId}${channelCond}`;
  } else if (f.channelIds.length > 0) {
    q = sql`SELECT COALESCE(SUM(response_count), 0)::int AS n FROM channels
            WHERE account_id = ${accountId} AND id IN (${inList(f.channelIds)})`;
  } else {
    q = sql`SELECT response_count AS n FROM accounts WHERE id = ${accountId}`;
  }
  const [row] = await rows<{ n: number }>(db, q);
  return row?.n ?? 0;
}

export async function getResponseById(db: Db, accountId: number, responseId: string): Promise<ResponseRow | null> {
  const [row] = await rows<ResponseRow>(db, sql`
    SELECT ${COLUMNS} FROM responses r WHERE r.id = ${responseId} AND r.account_id = ${accountId}`);
  return row ?? null;
}

export type TranscriptRow = {
  id: string; question: string; answer: string; question_message_id: string;
  answer_message_id: string; created_at: string;
};

/** The responses of one conversation, oldest first, as the transcript's message pairs. */
export async function listConversationTranscript(db: Db, accountId: number, conversationId: string): Promise<TranscriptRow[]> {
  return rows<TranscriptRow>(db, sql`
    SELECT r.id, r.question, r.answer, r.question_message_id, r.answer_message_id,
      ${utcText(sql`r.created_at`)} AS created_at
    FROM responses r WHERE r.conversation_id = ${conversationId} AND r.account_id = ${accountId}
    ORDER BY r.created_at ASC, r.id ASC`);
}

export type AttachmentRow = { id: string; message_id: string | null; filename: string; content_type: string; size: number };

export async function listConversationAttachments(db: Db, accountId: number, conversationId: string): Promise<AttachmentRow[]> {
  return rows<AttachmentRow>(db, sql`
    SELECT id, message_id, filename, content_type, size FROM attachments
    WHERE conversation_id = ${conversationId} AND account_id = ${accountId}
    ORDER BY created_at ASC, id ASC`);
}
