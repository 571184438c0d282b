import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { accountIsLive } from './account-deletion';
import { preparedRows } from './prepared';
import { preciseUtcText, utcText } from './shared';

/** The conversation if it belongs to this visitor of this account, else null. */
export async function getVisitorConversation(db: Db, accountId: number, visitorId: string, conversationId: string) {
  const [row] = await preparedRows<{ id: string; last_seq: number; channel_id: number; status: string; handled_by: 'ai' | 'human'; response_count: number }>(
    db,
    sql`
    SELECT id, last_seq, channel_id, status, handled_by, response_count FROM conversations
    WHERE id = ${conversationId} AND account_id = ${accountId} AND visitor_id = ${visitorId}`,
  );
  return row ?? null;
}

/**
 * The visitor's conversation for an ask, with the response a retry of `clientMessageId` already
 * stored (`existing_response_id`): one round trip where the ask once made two.
 */
export async function getVisitorConversationForAsk(db: Db, accountId: number, visitorId: string, conversationId: string, clientMessageId: string) {
  const [row] = await preparedRows<{
    id: string;
    last_seq: number;
    channel_id: number;
    status: string;
    handled_by: 'ai' | 'human';
    visitor_messages: number;
    existing_response_id: string | null;
  }>(
    db,
    sql`
    SELECT c.id, c.last_seq, c.channel_id, c.status, c.handled_by,
      c.response_count + (SELECT count(*) FROM conversation_messages m WHERE m.conversation_id = c.id AND m.author = 'visitor')::int AS visitor_messages,
      (SELECT r.id FROM responses r WHERE r.conversation_id = c.id AND r.client_message_id = ${clientMessageId}) AS existing_response_id
    FROM conversations c
    WHERE c.id = ${conversationId} AND c.account_id = ${accountId} AND c.visitor_id = ${visitorId}`,
  );
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

/** A new widget conversation, counted at once (channel and account counters), in one statement. False: it existed already. */
/** A visitor's new conversation (the widget's, or a mail's: no client, the sender's address as contact); false when the id exists. */
export async function insertVisitorConversation(
  db: Db,
  accountId: number,
  v: {
    id: string;
    channelId: number;
    title: string;
    visitorId: string;
    clientId: string | null;
    visitorEmail?: string | null;
  },
): Promise<boolean> {
  const done = await withRetry(() =>
    preparedRows<{ id: number }>(
      db,
      sql`
    WITH c AS (
      INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at, visitor_id, client_id, visitor_email)
      VALUES (${v.id}, ${accountId}, ${v.channelId}, ${v.title}, 'Open', now(), now(), ${v.visitorId}, ${v.clientId}, ${v.visitorEmail ?? null})
      ON CONFLICT (id) DO NOTHING
      RETURNING channel_id
    ), ch AS (
      UPDATE channels SET conversation_count = conversation_count + 1
      WHERE id = (SELECT channel_id FROM c) AND account_id = ${accountId} RETURNING id
    )
    UPDATE accounts SET conversation_count = conversation_count + 1 WHERE id = ${accountId} AND EXISTS (SELECT 1 FROM c) RETURNING id`,
    ),
  );
  return done.length > 0;
}

export type StoredEvent = { seq: number; kind: string; payload: Record<string, unknown> };

/**
 * Sequence numbers: ONE counter per conversation, `conversations.last_seq`, advanced by an
 * UPDATE … RETURNING in the same statement that stores the event. Row-level locking makes it
 * atomic across every instance and every connection, and a seq is only taken when its event is
 * written, so stored seqs are unique and gap-free.
 */
export async function nextSeq(db: Db, conversationId: string): Promise<number> {
  const [row] = await preparedRows<{ last_seq: number }>(
    db,
    sql`
    UPDATE conversations SET last_seq = last_seq + 1 WHERE id = ${conversationId} RETURNING last_seq`,
  );
  if (!row) throw new Error(`conversation ${conversationId} is gone`);
  return row.last_seq;
}

/** Stores an event with the next seq of its conversation (the payload is kept without `seq`). */
export async function insertConversationEvent(db: Db, conversationId: string, kind: string, payload: object): Promise<number> {
  const [row] = await preparedRows<{ seq: number }>(
    db,
    sql`
    WITH s AS (UPDATE conversations SET last_seq = last_seq + 1 WHERE id = ${conversationId} RETURNING last_seq)
    INSERT INTO conversation_events (conversation_id, seq, kind, payload)
    SELECT ${conversationId}, last_seq, ${kind}, ${JSON.stringify(payload)}::jsonb FROM s RETURNING seq`,
  );
  if (!row) throw new Error(`conversation ${conversationId} is gone`);
  return row.seq;
}

/** Stored events after `afterSeq`, oldest first, at most `limit`; each payload carries its seq. */
export async function listEventsAfter(db: Db, conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  return preparedRows<StoredEvent>(
    db,
    sql`
    SELECT seq, kind, payload || jsonb_build_object('seq', seq) AS payload FROM conversation_events
    WHERE conversation_id = ${conversationId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`,
  );
}

/** What a surviving instance needs to answer a question again. */
export type AnswerJob = { question: string; channel_id: number; question_message_id: string; answer_message_id: string };

/**
 * Stores a question durably: its event (with the next seq) and its in-flight answer row, leased
 * to `owner`, in ONE statement. A retry of the same client message id (on any instance) stores
 * nothing and returns the first response id with `seq: null`.
 */
export async function insertQuestion(
  db: Db,
  accountId: number,
  q: {
    conversationId: string;
    responseId: string;
    clientMessageId: string;
    owner: string;
    leaseSeconds: number;
    job: AnswerJob;
    payload: object;
  },
): Promise<{ responseId: string; seq: number | null }> {
  const [row] = await preparedRows<{ seq: number }>(
    db,
    sql`
    WITH a AS (
      INSERT INTO chat_answers (response_id, conversation_id, account_id, client_message_id, job, owner, lease_until)
      VALUES (${q.responseId}, ${q.conversationId}, ${accountId}, ${q.clientMessageId}, ${JSON.stringify(q.job)}::jsonb, ${q.owner},
        now() + make_interval(secs => ${q.leaseSeconds}))
      ON CONFLICT (conversation_id, client_message_id) DO NOTHING RETURNING response_id
    ), s AS (
      UPDATE conversations SET last_seq = last_seq + 1 WHERE id = ${q.conversationId} AND EXISTS (SELECT 1 FROM a) RETURNING last_seq
    )
    INSERT INTO conversation_events (conversation_id, seq, kind, payload)
    SELECT ${q.conversationId}, last_seq, 'question', ${JSON.stringify(q.payload)}::jsonb FROM s RETURNING seq`,
  );
  if (row) return { responseId: q.responseId, seq: row.seq };
  const [existing] = await preparedRows<{ response_id: string }>(
    db,
    sql`
    SELECT response_id FROM chat_answers WHERE conversation_id = ${q.conversationId} AND client_message_id = ${q.clientMessageId}`,
  );
  if (!existing) throw new Error('question neither stored nor found');
  return { responseId: existing.response_id, seq: null };
}

export type NewChatResponse = {
  id: string;
  conversationId: string;
  channelId: number;
  question: string;
  answer: string;
  error: string | null;
  clientMessageId: string;
  questionMessageId: string;
  answerMessageId: string;
  sources: unknown;
  /** The engine gave the "no answer" text (docs/contracts.md §12): a stored, queryable fact. */
  declined: boolean;
};

/**
 * Stores an answered (or failed) question with its finishing event (next seq), closes its
 * in-flight row and keeps every counter exact, in ONE statement. Returns the event's seq and
 * kind, or null when the response was already stored (by this or another instance): then nothing
 * changes, so each question gets exactly one answer.done or answer.error. `seqsBefore` seqs are
 * taken just before the event's (for the answer's last, unstored delta). With `handedOver`, a
 * conversation a person handles when the statement runs gets that error and event instead (no
 * seqs before): the AI's text never follows "<name> joined", and no round trip asks first.
 */
export async function insertChatResponse(
  db: Db,
  accountId: number,
  r: NewChatResponse,
  event: { kind: string; payload: object },
  seqsBefore: 0 | 1 = 0,
  handedOver: { error: string; kind: string; payload: object } | null = null,
): Promise<{ seq: number; kind: string } | null> {
  const human = handedOver
    ? sql`EXISTS (SELECT 1 FROM conversations WHERE id = ${r.conversationId} AND account_id = ${accountId} AND handled_by = 'human')`
    : sql`false`;
  const result = await withRetry(() =>
    preparedRows<{ seq: number; kind: string }>(
      db,
      sql`
    WITH h AS (SELECT ${human} AS human), ins AS (
      INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, error, client_message_id,
        question_message_id, answer_message_id, sources, declined, created_at, updated_at)
      VALUES (${r.id}, ${accountId}, ${r.conversationId}, ${r.channelId}, ${r.question},
        CASE WHEN (SELECT human FROM h) THEN '' ELSE ${r.answer} END,
        CASE WHEN (SELECT human FROM h) THEN ${handedOver?.error ?? null}::text ELSE ${r.error}::text END,
        ${r.clientMessageId}, ${r.questionMessageId}, ${r.answerMessageId},
        CASE WHEN (SELECT human FROM h) THEN '[]'::jsonb ELSE ${JSON.stringify(r.sources)}::jsonb END,
        CASE WHEN (SELECT human FROM h) THEN false ELSE ${r.declined}::boolean END, now(), now())
      ON CONFLICT (conversation_id, client_message_id) DO NOTHING RETURNING id
    ), conv AS (
      UPDATE conversations SET response_count = response_count + 1, updated_at = now(),
        last_seq = last_seq + 1 + CASE WHEN (SELECT human FROM h) THEN 0 ELSE ${seqsBefore}::int END
      WHERE id = ${r.conversationId} AND EXISTS (SELECT 1 FROM ins) RETURNING last_seq
    ), ch AS (
      UPDATE channels SET response_count = response_count + 1 WHERE account_id = ${accountId} AND id = ${r.channelId} AND EXISTS (SELECT 1 FROM ins) RETURNING id
    ), acc AS (
      UPDATE accounts SET response_count = response_count + 1 WHERE id = ${accountId} AND EXISTS (SELECT 1 FROM ins) RETURNING id
    ), fin AS (
      UPDATE chat_answers SET finished_at = now() WHERE response_id = ${r.id} AND EXISTS (SELECT 1 FROM ins) RETURNING response_id
    )
    INSERT INTO conversation_events (conversation_id, seq, kind, payload)
    SELECT ${r.conversationId}, last_seq,
      CASE WHEN (SELECT human FROM h) THEN ${handedOver?.kind ?? null}::text ELSE ${event.kind}::text END,
      CASE WHEN (SELECT human FROM h) THEN ${JSON.stringify(handedOver?.payload ?? null)}::jsonb ELSE ${JSON.stringify(event.payload)}::jsonb END
    FROM conv RETURNING seq, kind`,
    ),
  );
  return result[0] ? { seq: Number(result[0].seq), kind: result[0].kind } : null;
}

/** Extends the leases this owner holds on unfinished answers. */
export async function renewAnswerLeases(db: Db, owner: string, responseIds: string[], leaseSeconds: number) {
  if (responseIds.length === 0) return;
  await db.execute(sql`
    UPDATE chat_answers SET lease_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE owner = ${owner} AND finished_at IS NULL AND response_id IN (${sql.join(
      responseIds.map((i) => sql`${i}`),
      sql`, `,
    )})`);
}

/** Lets a survivor take these answers at once (a drain that ran out of time). */
export async function releaseAnswerLeases(db: Db, owner: string, responseIds: string[]) {
  if (responseIds.length === 0) return;
  await db.execute(sql`
    UPDATE chat_answers SET lease_until = now() - interval '1 second'
    WHERE owner = ${owner} AND finished_at IS NULL AND response_id IN (${sql.join(
      responseIds.map((i) => sql`${i}`),
      sql`, `,
    )})`);
}

export type ClaimedAnswer = {
  response_id: string;
  conversation_id: string;
  account_id: number;
  client_message_id: string;
  job: AnswerJob;
  attempts: number;
};

/** Takes over unfinished answers whose owner's lease ran out (SKIP LOCKED: one taker each). */
export async function claimExpiredAnswers(db: Db, owner: string, leaseSeconds: number, limit: number): Promise<ClaimedAnswer[]> {
  return rows<ClaimedAnswer>(
    db,
    sql`
    UPDATE chat_answers SET owner = ${owner}, lease_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1
    WHERE response_id IN (
      SELECT response_id FROM chat_answers WHERE finished_at IS NULL AND lease_until < now() AND ${accountIsLive(sql`account_id`)}
      ORDER BY lease_until LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING response_id, conversation_id, account_id, client_message_id, job, attempts`,
  );
}

/** Like/dislike toggle of one visitor on one response; counters on the response stay exact; updated_at moves. */
export async function toggleFeedback(db: Db, accountId: number, responseId: string, visitorId: string, value: 1 | -1) {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const [existing] = await rows<{ value: number }>(
      tx,
      sql`
      SELECT value FROM response_feedback WHERE response_id = ${responseId} AND visitor_id = ${visitorId} FOR UPDATE`,
    );
    let likes = 0;
    let dislikes = 0;
    let mine: 1 | -1 | null;
    if (existing?.value === value) {
      await tx.execute(sql`DELETE FROM response_feedback WHERE response_id = ${responseId} AND visitor_id = ${visitorId}`);
      if (value === 1) likes = -1;
      else dislikes = -1;
      mine = null;
    } else if (existing) {
      await tx.execute(sql`UPDATE response_feedback SET value = ${value}, created_at = now() WHERE response_id = ${responseId} AND visitor_id = ${visitorId}`);
      likes = value === 1 ? 1 : -1;
      dislikes = -likes;
      mine = value;
    } else {
      await tx.execute(sql`INSERT INTO response_feedback (response_id, visitor_id, value) VALUES (${responseId}, ${visitorId}, ${value})`);
      if (value === 1) likes = 1;
      else dislikes = 1;
      mine = value;
    }
    const [counts] = await rows<{ likes: number; dislikes: number }>(
      tx,
      sql`
      UPDATE responses SET likes = GREATEST(0, likes + ${likes}), dislikes = GREATEST(0, dislikes + ${dislikes}), updated_at = now()
      WHERE id = ${responseId} AND account_id = ${accountId} RETURNING likes, dislikes`,
    );
    return { likes: counts!.likes, dislikes: counts!.dislikes, mine };
  });
}

/** Stores a comment unless the response has `max` already (null then); the count's row lock orders concurrent ones. */
export async function insertComment(db: Db, accountId: number, responseId: string, visitorId: string, body: string, max: number) {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const [counts] = await rows<{ comments: number }>(
      tx,
      sql`
      UPDATE responses SET comments = comments + 1, updated_at = now() WHERE id = ${responseId} AND account_id = ${accountId} AND comments < ${max} RETURNING comments`,
    );
    if (!counts) return null;
    const [row] = await rows<{ id: string }>(
      tx,
      sql`
      INSERT INTO response_comments (account_id, response_id, visitor_id, body) VALUES (${accountId}, ${responseId}, ${visitorId}, ${body}) RETURNING id`,
    );
    return { commentId: row!.id, comments: counts.comments };
  });
}

/** A response of a conversation the visitor owns, else null. */
export async function getVisitorResponse(db: Db, accountId: number, visitorId: string, responseId: string) {
  const [row] = await rows<{ id: string; conversation_id: string }>(
    db,
    sql`
    SELECT r.id, r.conversation_id FROM responses r JOIN conversations c ON c.id = r.conversation_id
    WHERE r.id = ${responseId} AND r.account_id = ${accountId} AND c.visitor_id = ${visitorId}`,
  );
  return row ?? null;
}

export type HistoryRow = {
  id: string;
  question: string;
  answer: string;
  error: string | null;
  sources: unknown;
  declined: boolean;
  question_message_id: string;
  answer_message_id: string;
  client_message_id: string | null;
  likes: number;
  dislikes: number;
  created_at: string;
  sort_at: string;
  my_feedback: number | null;
};

/** One page of a visitor's conversation, newest `limit` responses before the cursor, returned oldest first. */
export async function listVisitorHistory(
  db: Db,
  accountId: number,
  visitorId: string,
  conversationId: string,
  limit: number,
  beforeResponseId?: string,
): Promise<HistoryRow[]> {
  const page = await rows<HistoryRow>(
    db,
    sql`
    SELECT r.id, r.question, r.answer, r.error, r.sources, r.declined, r.question_message_id, r.answer_message_id, r.client_message_id,
      r.likes, r.dislikes, ${utcText(sql`r.created_at`)} AS created_at, ${preciseUtcText(sql`r.created_at`)} AS sort_at,
      (SELECT value FROM response_feedback f WHERE f.response_id = r.id AND f.visitor_id = ${visitorId}) AS my_feedback
    FROM responses r WHERE r.conversation_id = ${conversationId} AND r.account_id = ${accountId}
      ${beforeResponseId ? sql`AND (r.created_at, r.id) < (SELECT created_at, id FROM responses WHERE id = ${beforeResponseId} AND conversation_id = ${conversationId})` : sql``}
    ORDER BY r.created_at DESC, r.id DESC LIMIT ${limit}`,
  );
  return page.reverse();
}
