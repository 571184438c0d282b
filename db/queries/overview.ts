import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { preciseUtcText, utcText } from './shared';

export async function getAccountTotals(db: Db, accountId: number) {
  const [row] = await rows<{ conversations: number; responses: number; likes: number; dislikes: number; comments: number; channels: number }>(
    db,
    sql`
    SELECT a.conversation_count AS conversations, a.response_count AS responses,
      (SELECT count(*)::int FROM channels WHERE account_id = ${accountId}) AS channels,
      COALESCE((SELECT sum(likes)::int FROM responses WHERE account_id = ${accountId}), 0) AS likes,
      COALESCE((SELECT sum(dislikes)::int FROM responses WHERE account_id = ${accountId}), 0) AS dislikes,
      COALESCE((SELECT sum(comments)::int FROM responses WHERE account_id = ${accountId}), 0) AS comments
    FROM accounts a WHERE a.id = ${accountId}`,
  );
  return row ?? { conversations: 0, responses: 0, likes: 0, dislikes: 0, comments: 0, channels: 0 };
}

export type Bucket = 'day' | 'week' | 'month';

/**
 * Responses per UTC day, week (Monday) or month from `from` to `to` (inclusive, YYYY-MM-DD),
 * zero-filled; each bucket is named by its first day.
 */
export async function getResponsesPerBucket(db: Db, accountId: number, range: { from: string; to: string; bucket: Bucket }) {
  const { from, to, bucket } = range;
  return rows<{ day: string; responses: number }>(
    db,
    sql`
    SELECT to_char(b.bucket, 'YYYY-MM-DD') AS day, COALESCE(c.n, 0)::int AS responses
    FROM generate_series(date_trunc(${bucket}, ${from}::timestamp), ${to}::timestamp, ('1 ' || ${bucket})::interval) AS b(bucket)
    LEFT JOIN (
      SELECT date_trunc(${bucket}, created_at AT TIME ZONE 'UTC') AS bucket, count(*) AS n FROM responses
      WHERE account_id = ${accountId}
        AND created_at >= (${from}::timestamp AT TIME ZONE 'UTC') AND created_at < ((${to}::date + 1)::timestamp AT TIME ZONE 'UTC')
      GROUP BY 1
    ) c ON c.bucket = b.bucket
    ORDER BY b.bucket`,
  );
}

/** The UTC days of the account's first and last response (null without responses). */
export async function getResponseDaySpan(db: Db, accountId: number) {
  const [row] = await rows<{ first: string | null; last: string | null }>(
    db,
    sql`
    SELECT to_char((SELECT min(created_at) FROM responses WHERE account_id = ${accountId}) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS first,
      to_char((SELECT max(created_at) FROM responses WHERE account_id = ${accountId}) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS last`,
  );
  return { first: row?.first ?? null, last: row?.last ?? null };
}

export async function getBusiestChannels(db: Db, accountId: number, limit: number) {
  return rows<{ id: number; name: string; conversations: number; responses: number }>(
    db,
    sql`
    SELECT id, name, conversation_count AS conversations, response_count AS responses FROM channels
    WHERE account_id = ${accountId} ORDER BY response_count DESC, id LIMIT ${limit}`,
  );
}

export type TranscriptEntry = {
  id: string;
  sort_at: string;
  question: string;
  answer: string;
  error: string | null;
  sources: unknown;
  likes: number;
  dislikes: number;
  comments: number;
  declined: boolean;
  created_at: string;
  question_message_id: string;
  answer_message_id: string;
};

export async function listTranscriptEntries(db: Db, accountId: number, conversationId: string) {
  return rows<TranscriptEntry>(
    db,
    sql`
    SELECT r.id, r.question, r.answer, r.error, r.sources, r.likes, r.dislikes, r.comments, r.declined,
      ${utcText(sql`r.created_at`)} AS created_at, r.question_message_id, r.answer_message_id,
      ${preciseUtcText(sql`r.created_at`)} AS sort_at
    FROM responses r WHERE r.conversation_id = ${conversationId} AND r.account_id = ${accountId} ORDER BY r.created_at, r.id`,
  );
}

export async function listCommentsOfConversation(db: Db, accountId: number, conversationId: string) {
  return rows<{ response_id: string; body: string; created_at: string }>(
    db,
    sql`
    SELECT c.response_id, c.body, to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS created_at
    FROM response_comments c JOIN responses r ON r.id = c.response_id
    WHERE r.conversation_id = ${conversationId} AND c.account_id = ${accountId} ORDER BY c.created_at`,
  );
}
