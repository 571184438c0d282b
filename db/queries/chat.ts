import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/** The conversation if it belongs to this visitor of this account, else null. */
export async function getVisitorConversation(db: Db, accountId: number, visitorId: string, conversationId: string) {
  const [row] = await rows<{ id: string; last_seq: number; channel_id: number }>(db, sql`
    SELECT id, last_seq, channel_id FROM conversations
    WHERE id = ${conversationId} AND account_id = ${accountId} AND visitor_id = ${visitorId}`);
  return row ?? null;
}

/**
 * Retries a statement that lost a deadlock or serialization race. Chat writes touch the hot
 * counter rows of the account in ONE statement (no explicit lock held across round trips); an
 * import that holds the account lock can still make one of them the deadlock victim.
 */
async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      let code: unknown;
      for (let err: unknown = e, d = 0; err && d < 5 && !code; err = (err as { cause?: unknown }).cause, d++) code = (err as { code?: unknown }).code;
      if (attempt >= 4 || (code !== '40P01' && code !== '40001')) throw e;
      await new Promise((r) => setTimeout(r, 20 * (attempt + 1)));
    }
  }
}

/** A new widget conversation, counted at once (channel and account counters), in one statement. */
export async function insertWidgetConversation(db: Db, accountId: number, v: {
  id: string; channelId: number; title: string; visitorId: string; clientId: string;
}) {
  await withRetry(() => db.execute(sql`
    WITH c AS (
      INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at, visitor_id, client_id)
      VALUES (${v.id}, ${accountId}, ${v.channelId}, ${v.title}, 'Open', now(), now(), ${v.visitorId}, ${v.clientId})
      ON CONFLICT (id) DO NOTHING
      RETURNING channel_id
    ), ch AS (
      UPDATE channels SET conversation_count = conversation_count + 1
      WHERE id = (SELECT channel_id FROM c) AND account_id = ${accountId} RETURNING id
    )
    UPDATE accounts SET conversation_count = conversation_count + 1 WHERE id = ${accountId} AND EXISTS (SELECT 1 FROM c)`));
}

export type StoredEvent = { seq: number; kind: string; payload: Record<string, unknown> };

export async function insertConversationEvent(db: Db, conversationId: string, seq: number, kind: string, payload: object) {
  await db.execute(sql`
    WITH e AS (INSERT INTO conversation_events (conversation_id, seq, kind, payload)
               VALUES (${conversationId}, ${seq}, ${kind}, ${JSON.stringify(payload)}::jsonb))
    UPDATE conversations SET last_seq = GREATEST(last_seq, ${seq}) WHERE id = ${conversationId}`);
}

export async function listEventsAfter(db: Db, conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  return rows<StoredEvent>(db, sql`
    SELECT seq, kind, payload FROM conversation_events
    WHERE conversation_id = ${conversationId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`);
}

export async function findResponseByClientMessage(db: Db, conversationId: string, clientMessageId: string) {
  const [row] = await rows<{ id: string }>(db, sql`
    SELECT id FROM responses WHERE conversation_id = ${conversationId} AND client_message_id = ${clientMessageId}`);
  return row ?? null;
}

export type NewChatResponse = {
  id: string; conversationId: string; channelId: number; question: string; answer: string; error: string | null;
  clientMessageId: string; questionMessageId: string; answerMessageId: string; sources: unknown;
};

/**
 * Stores an answered (or failed) question with its finishing event and keeps every counter
 * exact, in ONE statement (one round trip; the hot counter rows are locked only while it runs).
 * Returns false when the same client message id was already stored (then nothing changes).
 */
export async function insertChatResponse(db: Db, accountId: number, r: NewChatResponse, event: { seq: number; kind: string; payload: object }): Promise<boolean> {
  const result = await withRetry(() => rows<{ id: string }>(db, sql`
    WITH ins AS (
      INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, error, client_message_id,
        question_message_id, answer_message_id, sources, created_at)
      VALUES (${r.id}, ${accountId}, ${r.conversationId}, ${r.channelId}, ${r.question}, ${r.answer}, ${r.error},
        ${r.clientMessageId}, ${r.questionMessageId}, ${r.answerMessageId}, ${JSON.stringify(r.sources)}::jsonb, now())
      ON CONFLICT (conversation_id, client_message_id) DO NOTHING RETURNING id
    ), conv AS (
      UPDATE conversations SET response_count = response_count + 1, updated_at = now(), last_seq = GREATEST(last_seq, ${event.seq})
      WHERE id = ${r.conversationId} AND EXISTS (SELECT 1 FROM ins) RETURNING id
    ), ch AS (
      UPDATE channels SET response_count = response_count + 1 WHERE account_id = ${accountId} AND id = ${r.channelId} AND EXISTS (SELECT 1 FROM ins) RETURNING id
    ), acc AS (
      UPDATE accounts SET response_count = response_count + 1 WHERE id = ${accountId} AND EXISTS (SELECT 1 FROM ins) RETURNING id
    ), ev AS (
      INSERT INTO conversation_events (conversation_id, seq, kind, payload)
      SELECT ${r.conversationId}, ${event.seq}, ${event.kind}, ${JSON.stringify(event.payload)}::jsonb WHERE EXISTS (SELECT 1 FROM ins)
      RETURNING seq
    )
    SELECT id FROM ins`));
  return result.length > 0;
}

/** Questions whose answer never finished (the process stopped mid-answer). */
export async function listUnfinishedQuestions(db: Db) {
  return rows<{ conversation_id: string; account_id: number; channel_id: number; last_seq: number; payload: Record<string, unknown> }>(db, sql`
    SELECT e.conversation_id, c.account_id, c.channel_id, c.last_seq, e.payload
    FROM conversation_events e JOIN conversations c ON c.id = e.conversation_id
    WHERE e.kind = 'question' AND NOT EXISTS (
      SELECT 1 FROM responses r WHERE r.conversation_id = e.conversation_id
        AND r.client_message_id = e.payload->>'client_message_id')
    ORDER BY e.conversation_id, e.seq`);
}

/** Like/dislike toggle of one visitor on one response; counters on the response stay exact. */
export async function toggleFeedback(db: Db, accountId: number, responseId: string, visitorId: string, value: 1 | -1) {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const [existing] = await rows<{ value: number }>(tx, sql`
      SELECT value FROM response_feedback WHERE response_id = ${responseId} AND visitor_id = ${visitorId} FOR UPDATE`);
    let likes = 0; let dislikes = 0; let mine: 1 | -1 | null;
    if (existing?.value === value) {
      await tx.execute(sql`DELETE FROM response_feedback WHERE response_id = ${responseId} AND visitor_id = ${visitorId}`);
      if (value === 1) likes = -1; else dislikes = -1;
      mine = null;
    } else if (existing) {
      await tx.execute(sql`UPDATE response_feedback SET value = ${value}, created_at = now() WHERE response_id = ${responseId} AND visitor_id = ${visitorId}`);
      likes = value === 1 ? 1 : -1; dislikes = -likes;
      mine = value;
    } else {
      await tx.execute(sql`INSERT INTO response_feedback (response_id, visitor_id, value) VALUES (${responseId}, ${visitorId}, ${value})`);
      if (value === 1) likes = 1; else dislikes = 1;
      mine = value;
    }
    const [counts] = await rows<{ likes: number; dislikes: number }>(tx, sql`
      UPDATE responses SET likes = GREATEST(0, likes + ${likes}), dislikes = GREATEST(0, dislikes + ${dislikes})
      WHERE id = ${responseId} AND account_id = ${accountId} RETURNING likes, dislikes`);
    return { likes: counts!.likes, dislikes: counts!.dislikes, mine };
  });
}

export async function insertComment(db: Db, accountId: number, responseId: string, visitorId: string, body: string) {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const [row] = await rows<{ id: string }>(tx, sql`
      INSERT INTO response_comments (account_id, response_id, visitor_id, body) VALUES (${accountId}, ${responseId}, ${visitorId}, ${body}) RETURNING id`);
    const [counts] = await rows<{ comments: number }>(tx, sql`
      UPDATE responses SET comments = comments + 1 WHERE id = ${responseId} AND account_id = ${accountId} RETURNING comments`);
    return { commentId: row!.id, comments: counts!.comments };
  });
}

/** A response of a conversation the visitor owns, else null. */
export async function getVisitorResponse(db: Db, accountId: number, visitorId: string, responseId: string) {
  const [row] = await rows<{ id: string; conversation_id: string }>(db, sql`
    SELECT r.id, r.conversation_id FROM responses r JOIN conversations c ON c.id = r.conversation_id
    WHERE r.id = ${responseId} AND r.account_id = ${accountId} AND c.visitor_id = ${visitorId}`);
  return row ?? null;
}

export type HistoryRow = {
  id: string; question: string; answer: string; error: string | null; sources: unknown; question_message_id: string;
  answer_message_id: string; client_message_id: string | null; likes: number; dislikes: number; created_at: string;
  my_feedback: number | null;
};

export async function listVisitorHistory(db: Db, accountId: number, visitorId: string, conversationId: string): Promise<HistoryRow[]> {
  return rows<HistoryRow>(db, sql`
    SELECT r.id, r.question, r.answer, r.error, r.sources, r.question_message_id, r.answer_message_id, r.client_message_id,
      r.likes, r.dislikes, ${utcText(sql`r.created_at`)} AS created_at,
      (SELECT value FROM response_feedback f WHERE f.response_id = r.id AND f.visitor_id = ${visitorId}) AS my_feedback
    FROM responses r WHERE r.conversation_id = ${conversationId} AND r.account_id = ${accountId}
    ORDER BY r.created_at, r.id`);
}
