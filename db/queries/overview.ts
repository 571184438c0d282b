import { sql, type SQL } from 'drizzle-orm';
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

/** The responses of a conversation, oldest first; `ids`: only these (a page of the transcript). */
export async function listTranscriptEntries(db: Db, accountId: number, conversationId: string, ids?: string[]) {
  const only = ids ? sql` AND r.id = ANY(${sql.param(ids)}::uuid[])` : sql``;
  return rows<TranscriptEntry>(
    db,
    sql`
    SELECT r.id, r.question, r.answer, r.error, r.sources, r.likes, r.dislikes, r.comments, r.declined,
      ${utcText(sql`r.created_at`)} AS created_at, r.question_message_id, r.answer_message_id,
      ${preciseUtcText(sql`r.created_at`)} AS sort_at
    FROM responses r WHERE r.conversation_id = ${conversationId} AND r.account_id = ${accountId}${only} ORDER BY r.created_at, r.id`,
  );
}

/** The first `perResponse` comments of each of these responses, oldest first. */
export async function listCommentsOfResponses(db: Db, accountId: number, responseIds: string[], perResponse: number) {
  if (responseIds.length === 0) return [];
  return rows<{ response_id: string; body: string; created_at: string }>(
    db,
    sql`
    SELECT response_id, body, created_at FROM (
      SELECT c.response_id, c.body, to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS created_at, c.created_at AS at, c.id,
        row_number() OVER (PARTITION BY c.response_id ORDER BY c.created_at, c.id) AS n
      FROM response_comments c WHERE c.account_id = ${accountId} AND c.response_id = ANY(${sql.param(responseIds)}::uuid[])) x
    WHERE n <= ${perResponse} ORDER BY at, id`,
  );
}

/**
 * A unit of a transcript in the one order of lib/conversations/messages.ts: a response (rank 0,
 * its question and answer) or a stored message (rank 1), by time, rank, seq, id. `k`: the
 * microsecond UTC text of its time.
 */
export type TranscriptKey = { k: string; rank: number; seq: number; id: string };

const unitsOf = (accountId: number, conversationId: string, withNotes: boolean) => sql`
  SELECT r.created_at AS at, 0 AS rank, 0::float8 AS seq, r.id::text COLLATE "C" AS id FROM responses r
  WHERE r.account_id = ${accountId} AND r.conversation_id = ${conversationId}
  UNION ALL
  SELECT m.created_at, 1, m.seq::float8, m.id::text COLLATE "C" FROM conversation_messages m
  WHERE m.account_id = ${accountId} AND m.conversation_id = ${conversationId}${withNotes ? sql`` : sql` AND m.author <> 'note'`}`;

const before = (k: TranscriptKey): SQL =>
  sql`(u.at, u.rank, u.seq, u.id) < ((${k.k}::timestamp AT TIME ZONE 'UTC'), ${k.rank}::int, ${k.seq}::float8, ${k.id}::text COLLATE "C")`;

/** How many units the conversation's transcript has. */
export async function countTranscriptUnits(db: Db, accountId: number, conversationId: string, withNotes: boolean): Promise<number> {
  const [row] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM (${unitsOf(accountId, conversationId, withNotes)}) u`);
  return row?.n ?? 0;
}

/** How many units come before this response (its 0-based position); null when it is not the conversation's. */
export async function transcriptPositionOf(db: Db, accountId: number, conversationId: string, responseId: string, withNotes: boolean): Promise<number | null> {
  const [row] = await rows<{ n: number }>(
    db,
    sql`
    SELECT (SELECT count(*) FROM (${unitsOf(accountId, conversationId, withNotes)}) u
      WHERE (u.at, u.rank, u.seq, u.id) < (r.created_at, 0, 0::float8, r.id::text COLLATE "C"))::int AS n
    FROM responses r WHERE r.id = ${responseId} AND r.account_id = ${accountId} AND r.conversation_id = ${conversationId}`,
  );
  return row ? row.n : null;
}

/** One page of units, oldest first: by position (`offset`), or the newest `limit` before a unit's key. */
export async function listTranscriptKeys(
  db: Db,
  accountId: number,
  conversationId: string,
  withNotes: boolean,
  page: { offset: number; limit: number } | { before: TranscriptKey | null; limit: number },
): Promise<TranscriptKey[]> {
  const units = unitsOf(accountId, conversationId, withNotes);
  const cols = sql`${preciseUtcText(sql`u.at`)} AS k, u.rank, u.seq, u.id`;
  if ('offset' in page) {
    return rows<TranscriptKey>(db, sql`SELECT ${cols} FROM (${units}) u ORDER BY u.at, u.rank, u.seq, u.id OFFSET ${page.offset} LIMIT ${page.limit}`);
  }
  const newest = await rows<TranscriptKey>(
    db,
    sql`SELECT ${cols} FROM (${units}) u ${page.before ? sql`WHERE ${before(page.before)}` : sql``}
      ORDER BY u.at DESC, u.rank DESC, u.seq DESC, u.id DESC LIMIT ${page.limit}`,
  );
  return newest.reverse();
}
