import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';

export async function getAccountTotals(db: Db, accountId: number) {
  const [row] = await rows<{ conversations: number; responses: number; likes: number; dislikes: number; comments: number; channels: number }>(db, sql`
    SELECT a.conversation_count AS conversations, a.response_count AS responses,
      (SELECT count(*)::int FROM channels WHERE account_id = ${accountId}) AS channels,
      COALESCE((SELECT sum(likes)::int FROM responses WHERE account_id = ${accountId}), 0) AS likes,
      COALESCE((SELECT sum(dislikes)::int FROM responses WHERE account_id = ${accountId}), 0) AS dislikes,
      COALESCE((SELECT sum(comments)::int FROM responses WHERE account_id = ${accountId}), 0) AS comments
    FROM accounts a WHERE a.id = ${accountId}`);
  return row ?? { conversations: 0, responses: 0, likes: 0, dislikes: 0, comments: 0, channels: 0 };
}

/** Responses per UTC day over the last `days` days, zero-filled. */
export async function getResponsesPerDay(db: Db, accountId: number, days: number) {
  return rows<{ day: string; responses: number }>(db, sql`
    SELECT to_char(d.day, 'YYYY-MM-DD') AS day, COALESCE(c.n, 0)::int AS responses
    FROM generate_series((now() AT TIME ZONE 'UTC')::date - (${days}::int - 1), (now() AT TIME ZONE 'UTC')::date, '1 day') AS d(day)
    LEFT JOIN (
      SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n FROM responses
      WHERE account_id = ${accountId} AND created_at >= now() - make_interval(days => ${days}::int + 1)
      GROUP BY 1
    ) c ON c.day = d.day
    ORDER BY d.day`);
}

export async function getBusiestChannels(db: Db, accountId: number, limit: number) {
  return rows<{ id: number; name: string; conversations: number; responses: number }>(db, sql`
    SELECT id, name, conversation_count AS conversations, response_count AS responses FROM channels
    WHERE account_id = ${accountId} ORDER BY response_count DESC, id LIMIT ${limit}`);
}

export type TranscriptEntry = {
  id: string; question: string; answer: string; error: string | null; sources: unknown; likes: number; dislikes: number;
  comments: number; created_at: string; question_message_id: string; answer_message_id: string;
};

export async function listTranscriptEntries(db: Db, accountId: number, conversationId: string) {
  return rows<TranscriptEntry>(db, sql`
    SELECT id, question, answer, error, sources, likes, dislikes, comments,
      to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS created_at, question_message_id, answer_message_id
    FROM responses WHERE conversation_id = ${conversationId} AND account_id = ${accountId} ORDER BY created_at, id`);
}

export async function listCommentsOfConversation(db: Db, accountId: number, conversationId: string) {
  return rows<{ response_id: string; body: string; created_at: string }>(db, sql`
    SELECT c.response_id, c.body, to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS created_at
    FROM response_comments c JOIN responses r ON r.id = c.response_id
    WHERE r.conversation_id = ${conversationId} AND c.account_id = ${accountId} ORDER BY c.created_at`);
}
