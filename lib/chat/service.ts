import { createHash, randomUUID } from 'node:crypto';
import { getDb } from '../../db/client';
import {
  findResponseByClientMessage, getVisitorConversation, getVisitorResponse, insertChatResponse, insertComment,
  insertConversationEvent, insertWidgetConversation, listEventsAfter, listUnfinishedQuestions, listVisitorHistory, toggleFeedback,
} from '../../db/queries/chat';
import { attachUploads, getVisitorUploads } from '../../db/queries/uploads';
import { AppError } from '../api/errors';
import type { WidgetClaims } from '../auth/widget-tokens';
import { metrics } from '../ops/metrics';
import { indexAttachedDocuments } from '../uploads/service';
import { answerEngine, EngineError, type Source } from './engine';
import type { ClientRequest, HistoryMessage, ServerEvent, UploadInfo } from './protocol';
import { StreamRegistry, type ConversationStream, type Subscriber } from './streams';

/** Deltas sent per answer at most; the rest arrives with answer.done. Also the seq reserve on recovery. */
export const MAX_DELTAS_PER_ANSWER = 5000;

const REGISTRY = Symbol.for('svc.chatStreams');
function registry(): StreamRegistry {
  const holder = globalThis as { [REGISTRY]?: StreamRegistry };
  holder[REGISTRY] ??= new StreamRegistry();
  return holder[REGISTRY];
}

const notFound = (what: string) => new AppError('not_found', `No ${what} of yours with that id.`);

type OwnConversation = NonNullable<Awaited<ReturnType<typeof getVisitorConversation>>>;

/** The visitor's own conversation (not_found otherwise): one lookup serves ownership and the stream. */
async function ownConversation(claims: WidgetClaims, conversationId: string): Promise<OwnConversation> {
  const conv = await getVisitorConversation(await getDb(), claims.accountId, claims.visitorId, conversationId);
  if (!conv) throw notFound('conversation');
  return conv;
}

async function ownStream(claims: WidgetClaims, conversationId: string, known?: OwnConversation): Promise<ConversationStream> {
  const conv = known ?? (await ownConversation(claims, conversationId));
  return registry().get(conversationId, claims.accountId, async () => conv.last_seq);
}

async function storedEvents(conversationId: string, after: number): Promise<ServerEvent[]> {
  const events = await listEventsAfter(await getDb(), conversationId, after, 5000);
  return events.map((e) => e.payload as ServerEvent);
}

/** A connection's subscription to one conversation (each conversation has its own seq). */
export type SubscriberFor = (conversationId: string) => Subscriber;

export async function subscribe(claims: WidgetClaims, subFor: SubscriberFor, conversationId: string, afterSeq: number | null, known?: OwnConversation) {
  const stream = await ownStream(claims, conversationId, known);
  const lastSeq = await stream.subscribe(subFor(conversationId), afterSeq, (after) => storedEvents(conversationId, after));
  return { stream, lastSeq };
}

/**
 * The id of the conversation a visitor's FIRST question starts, derived from the visitor and the
 * client message id: a retried first question (its acknowledgement lost) lands in the same one.
 */
function firstConversationId(accountId: number, visitorId: string, clientMessageId: string): string {
  const h = createHash('sha256').update(`${accountId}\n${visitorId}\n${clientMessageId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function unsubscribeAll(subscriberId: string, conversationIds: Iterable<string>) {
  for (const id of conversationIds) {
    void registry().peek(id)?.then((s) => s.unsubscribe(subscriberId), () => {});
  }
}

function titleOf(question: string): string {
  const oneLine = question.replace(/\s+/g, ' ').trim();
  return oneLine.length > 80 ? `${oneLine.slice(0, 79).replace(/\s+\S*$/, '')}…` : oneLine;
}

/**
 * Accepts a question: creates the conversation when needed, stores the question event (so it
 * is never lost), and starts the answer. A retry with the same client_message_id stores nothing new.
 */
export async function ask(claims: WidgetClaims, subFor: SubscriberFor, req: ClientRequest<'ask'>) {
  const db = await getDb();
  let conversationId = req.conversation_id;
  if (!conversationId) {
    conversationId = firstConversationId(claims.accountId, claims.visitorId, req.client_message_id);
    await insertWidgetConversation(db, claims.accountId, {
      id: conversationId, channelId: claims.channelId, title: titleOf(req.text), visitorId: claims.visitorId, clientId: claims.clientId,
    });
  }
  const conv = await ownConversation(claims, conversationId);
  const channelId = conv.channel_id;
  const { stream } = await subscribe(claims, subFor, conversationId, null, conv);
  const cmid = req.client_message_id;
  const running = stream.inflight.get(cmid);
  if (running) return { conversation_id: conversationId, client_message_id: cmid, response_id: running.responseId, duplicate: true };
  const responseId = randomUUID();
  stream.inflight.set(cmid, { responseId });
  try {
    const existing = await findResponseByClientMessage(db, conversationId, cmid);
    if (existing) {
      stream.inflight.delete(cmid);
      return { conversation_id: conversationId, client_message_id: cmid, response_id: existing.id, duplicate: true };
    }
    const ids = [...new Set(req.attachments ?? [])];
    const uploads = await getVisitorUploads(db, claims.accountId, claims.visitorId, ids);
    if (uploads.length !== ids.length) throw new AppError('not_found', 'An attachment is unknown, not yours, or already used.');
    const questionMessageId = randomUUID();
    const answerMessageId = randomUUID();
    const attachments: UploadInfo[] = uploads.map((u) => ({ upload_id: u.id, filename: u.filename, content_type: u.content_type, size: u.size }));
    await stream.emit({ type: 'question', conversation_id: conversationId, client_message_id: cmid, response_id: responseId, text: req.text, attachments },
      async (seq, event) => {
        await insertConversationEvent(db, conversationId!, seq, 'question', { ...event, question_message_id: questionMessageId, answer_message_id: answerMessageId, channel_id: channelId });
        await attachUploads(db, claims.accountId, ids, conversationId!, questionMessageId);
      });
    // Documents the visitor attached become answerable in this conversation (capped; see lib/uploads).
    await indexAttachedDocuments(claims.accountId, conversationId, uploads);
    void runAnswer(stream, claims.accountId, { conversationId, channelId, cmid, responseId, question: req.text, questionMessageId, answerMessageId });
    return { conversation_id: conversationId, client_message_id: cmid, response_id: responseId, duplicate: false };
  } catch (e) {
    stream.inflight.delete(cmid);
    throw e;
  }
}

type AnswerJob = {
  conversationId: string; channelId: number; cmid: string; responseId: string; question: string;
  questionMessageId: string; answerMessageId: string;
};

async function runAnswer(stream: ConversationStream, accountId: number, job: AnswerJob) {
  const base = { conversation_id: job.conversationId, client_message_id: job.cmid, response_id: job.responseId };
  metrics.answerInFlight(1);
  let text = '';
  let sources: Source[] = [];
  let failure: string | null = null;
  try {
    const answer = await answerEngine().answer({ accountId, conversationId: job.conversationId, question: job.question, signal: AbortSignal.timeout(120_000) });
    sources = answer.sources;
    let n = 0;
    for await (const delta of answer.deltas) {
      text += delta;
      if (n++ < MAX_DELTAS_PER_ANSWER) await stream.emit({ type: 'answer.delta', ...base, text: delta });
    }
  } catch (e) {
    failure = e instanceof EngineError ? e.message : 'The answer could not be produced.';
    if (!(e instanceof EngineError)) console.error(`answer ${job.responseId} failed:`, e);
  }
  try {
    await finishAnswer(stream, accountId, job, failure === null ? { answer: text, sources } : { error: failure });
  } finally {
    stream.inflight.delete(job.cmid);
    metrics.answerInFlight(-1);
  }
}

async function finishAnswer(stream: ConversationStream, accountId: number, job: AnswerJob, outcome: { answer: string; sources: Source[] } | { error: string }) {
  const base = { conversation_id: job.conversationId, client_message_id: job.cmid, response_id: job.responseId };
  const draft = 'error' in outcome
    ? { type: 'answer.error' as const, ...base, message: outcome.error }
    : { type: 'answer.done' as const, ...base, answer: outcome.answer, sources: outcome.sources };
  const db = await getDb();
  try {
    await stream.emit(draft, (seq, event) => insertChatResponse(db, accountId, {
      id: job.responseId, conversationId: job.conversationId, channelId: job.channelId, question: job.question,
      answer: 'error' in outcome ? '' : outcome.answer, error: 'error' in outcome ? outcome.error : null,
      clientMessageId: job.cmid, questionMessageId: job.questionMessageId, answerMessageId: job.answerMessageId,
      sources: 'error' in outcome ? [] : outcome.sources,
    }, { seq, kind: event.type, payload: event }));
  } catch (e) {
    console.error(`answer ${job.responseId} could not be stored:`, (e as Error).message);
    await stream.emit({ type: 'answer.error', ...base, message: 'The answer could not be saved; please ask again.' }).catch(() => {});
  }
}

/** At start-up: questions whose answer was cut off by a stop are stored as failed, never lost. */
export async function recoverInterruptedAnswers(): Promise<number> {
  const db = await getDb();
  const unfinished = await listUnfinishedQuestions(db);
  const bumped = new Map<string, number>();
  for (const q of unfinished) {
    const p = q.payload as Record<string, string>;
    const seq = (bumped.get(q.conversation_id) ?? q.last_seq) + MAX_DELTAS_PER_ANSWER + 1;
    bumped.set(q.conversation_id, seq);
    const event = { type: 'answer.error', conversation_id: q.conversation_id, seq, client_message_id: p.client_message_id,
      response_id: p.response_id, message: 'The answer was interrupted by a server restart; please ask again.' };
    await insertChatResponse(db, q.account_id, {
      id: p.response_id!, conversationId: q.conversation_id, channelId: Number(p.channel_id ?? q.channel_id), question: p.text ?? '',
      answer: '', error: event.message, clientMessageId: p.client_message_id!, questionMessageId: p.question_message_id ?? randomUUID(),
      answerMessageId: p.answer_message_id ?? randomUUID(), sources: [],
    }, { seq, kind: 'answer.error', payload: event });
  }
  return unfinished.length;
}

export async function history(claims: WidgetClaims, subFor: SubscriberFor, req: ClientRequest<'history'>) {
  const { lastSeq } = await subscribe(claims, subFor, req.conversation_id, null);
  const rows = await listVisitorHistory(await getDb(), claims.accountId, claims.visitorId, req.conversation_id);
  const messages: HistoryMessage[] = rows.flatMap((r) => {
    const common = { created_at: r.created_at, response_id: r.id, likes: r.likes, dislikes: r.dislikes,
      mine: r.my_feedback === 1 ? 'like' as const : r.my_feedback === -1 ? 'dislike' as const : null };
    return [
      { ...common, message_id: r.question_message_id, role: 'user' as const, content: r.question, error: null, sources: [] },
      { ...common, message_id: r.answer_message_id, role: 'assistant' as const, content: r.answer, error: r.error,
        sources: (r.sources as Source[] | null) ?? [] },
    ];
  });
  return { conversation_id: req.conversation_id, last_seq: lastSeq, messages };
}

/** The stream of the conversation an answer of this visitor belongs to (not_found otherwise). */
async function answerStream(claims: WidgetClaims, responseId: string) {
  const db = await getDb();
  const response = await getVisitorResponse(db, claims.accountId, claims.visitorId, responseId);
  if (!response) throw notFound('answer');
  return { db, conversationId: response.conversation_id, stream: await ownStream(claims, response.conversation_id) };
}

export async function feedback(claims: WidgetClaims, req: ClientRequest<'feedback'>) {
  const { db, conversationId, stream } = await answerStream(claims, req.response_id);
  let result: { likes: number; dislikes: number; mine: 1 | -1 | null } | undefined;
  await stream.emit({ type: 'feedback', conversation_id: conversationId, response_id: req.response_id, likes: 0, dislikes: 0 },
    async (seq, event) => {
      result = await toggleFeedback(db, claims.accountId, req.response_id, claims.visitorId, req.value === 'like' ? 1 : -1);
      Object.assign(event, { likes: result.likes, dislikes: result.dislikes });
      await insertConversationEvent(db, conversationId, seq, 'feedback', event);
    });
  return { response_id: req.response_id, likes: result!.likes, dislikes: result!.dislikes,
    mine: result!.mine === 1 ? 'like' : result!.mine === -1 ? 'dislike' : null };
}

export async function comment(claims: WidgetClaims, req: ClientRequest<'comment'>) {
  const { db, conversationId, stream } = await answerStream(claims, req.response_id);
  let stored: { commentId: string; comments: number } | undefined;
  await stream.emit({ type: 'comment', conversation_id: conversationId, response_id: req.response_id, comments: 0 },
    async (seq, event) => {
      stored = await insertComment(db, claims.accountId, req.response_id, claims.visitorId, req.text);
      Object.assign(event, { comments: stored.comments });
      await insertConversationEvent(db, conversationId, seq, 'comment', event);
    });
  return { response_id: req.response_id, comment_id: stored!.commentId, comments: stored!.comments };
}

export function sweepStreams() {
  return registry().sweep(5 * 60_000);
}
