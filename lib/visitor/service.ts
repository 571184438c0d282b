import { createHash, randomUUID } from 'node:crypto';
import { getDb } from '../../db/client';
import {
  getVisitorConversation,
  getVisitorConversationForAsk,
  getVisitorResponse,
  insertComment,
  insertQuestion,
  insertVisitorConversation,
  listVisitorHistory,
  toggleFeedback,
  type AnswerJob,
} from '../../db/queries/chat';
import { attachUploads, getVisitorUploads, type UploadRow } from '../../db/queries/uploads';
import { listConversationAttachments } from '../../db/queries/responses';
import { getMessageByClientId } from '../../db/queries/handoff';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { isDraining } from '../core/drain';
import { indexAttachedDocuments } from '../uploads/service';
import { effectiveBotSettings } from '../bot/settings';
import { sourcesForVisitors } from '../answers/engine';
import { answerInBackground, instanceId } from '../answers/runner';
import { publishEvent, storeEvent } from '../conversations/events';
import { messagesOf, roleOf, type ConversationMessage, type MessageAttachment } from '../conversations/messages';
import { listConversationMessages } from '../../db/queries/handoff';
import { changeWithEvent, recordConversationCreated, recordResponseEvent, webhookEventsCommitted } from '../webhooks/events';
import type { UploadInfo } from '../conversations/shapes';
import type { AskAck, HandoffAck, HistoryMessage, Visitor, VisitorRequest } from './contract';
import { asksForPerson } from '../conversations/handoff-phrases';
import { COMMENTS_PER_RESPONSE } from '../responses/contract';
import { refuseWhenVisitorMessagesFull } from '../conversations/handoff-contract';
import { getHandoffSettings } from '../conversations/availability';
import { keepVisitorMessage, markMessagesSeen, rateConversation, requestHandoff, setVisitorEmail, storeVisitorMessage } from '../conversations/handoff';

/**
 * The visitor's operations, one service every door calls (the widget's socket, lib/chat/handlers.ts;
 * the demo): ask, a message stored for a person, the handoff, history, feedback and comments.
 * Transport concerns (rooms, resume, the pre-2.1 widget's shapes) stay with each door.
 */

/** Responses per `history` page (hostile-input issue). */
export const HISTORY_PAGE = 50;

const notFound = (what: string) => new AppError('not_found', `No ${what} of yours with that id.`);

export type OwnConversation = NonNullable<Awaited<ReturnType<typeof getVisitorConversation>>>;

/** The visitor's own conversation (not_found otherwise). */
export async function ownConversation(claims: Visitor, conversationId: string): Promise<OwnConversation> {
  const conv = await getVisitorConversation(await getDb(), claims.accountId, claims.visitorId, conversationId);
  if (!conv) throw notFound('conversation');
  return conv;
}

/** Subscribes the caller's connection to a conversation's room (capped per connection by the caller). */
export type JoinRoom = (conversationId: string) => void;

/**
 * The id of the conversation a visitor's FIRST question starts, derived from the visitor and the
 * client message id: a retried first question (its acknowledgement lost) lands in the same one.
 */
function firstConversationId(accountId: number, visitorId: string, clientMessageId: string): string {
  const h = createHash('sha256').update(`${accountId}\n${visitorId}\n${clientMessageId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function refuseWhileDraining() {
  if (isDraining()) throw new AppError('unavailable', 'This server is restarting; your widget retries on another one.');
}

/**
 * A visitor's new conversation with its `conversation.created` webhook event, committed together
 * (docs/contracts.md §11: an outbox). Idempotent by id: a door retrying the same start creates one.
 * `email`: the visitor's address when the door knows it (mail).
 */
export async function startConversation(visitor: Visitor, v: { id: string; title: string; email: string | null }): Promise<void> {
  const { queued } = await changeWithEvent(
    await getDb(),
    visitor.accountId,
    'conversation.created',
    (d) =>
      insertVisitorConversation(d, visitor.accountId, {
        id: v.id,
        channelId: visitor.channelId,
        title: v.title,
        visitorId: visitor.visitorId,
        clientId: visitor.clientId,
        visitorEmail: v.email,
      }),
    (tx, created) => (created ? recordConversationCreated(tx, visitor.accountId, v.id, true) : Promise.resolve(0)),
  );
  webhookEventsCommitted(queued);
}

/** A conversation's title from its first words (at most 80 characters, cut at a word). */
export function titleOf(question: string): string {
  const oneLine = question.replace(/\s+/g, ' ').trim();
  return oneLine.length > 80 ? `${oneLine.slice(0, 79).replace(/\s+\S*$/, '')}…` : oneLine;
}

/**
 * The rate-limit check of an ask (lib/chat/limits.ts askAdmissions): `check` rejects with `rate_limited` when a
 * limit refuses. `overlap`: the check may run while the named conversation is read (the visitor's
 * last check left room, so a flood is refused before it reads anything; BENCHMARKS.md run 9).
 */
export type Admission = { check: () => Promise<void>; overlap: boolean };

/**
 * Accepts a question. It is acknowledged only once durable: the question event and the answer's
 * lease row are written in one statement (with the uploads, in one transaction). A retry with the
 * same client_message_id, on any instance, stores nothing new and returns the same response id.
 */
export async function ask(claims: Visitor, join: JoinRoom, req: VisitorRequest<'ask'>, admission: Admission) {
  refuseWhileDraining();
  const db = await getDb();
  let conversationId = req.conversation_id;
  // Reads of a conversation the visitor names may overlap the rate-limit check (admission.overlap);
  // nothing is written before it has passed.
  const read = (id: string) =>
    getVisitorConversationForAsk(db, claims.accountId, claims.visitorId, id, req.client_message_id).then((c) => {
      if (!c) throw notFound('conversation');
      return c;
    });
  const reads = conversationId && admission.overlap ? read(conversationId) : null;
  reads?.catch(() => {}); // a refusal below wins; the reads' own failure is awaited after it
  await admission.check();
  if (!conversationId) {
    conversationId = firstConversationId(claims.accountId, claims.visitorId, req.client_message_id);
    await startConversation(claims, { id: conversationId, title: titleOf(req.text), email: null });
  }
  const conv = await (reads ?? read(conversationId));
  join(conversationId);
  const cmid = req.client_message_id;
  const ack = (responseId: string, duplicate: boolean): AskAck => ({
    conversation_id: conversationId,
    client_message_id: cmid,
    response_id: responseId,
    duplicate,
  });
  if (conv.existing_response_id) return ack(conv.existing_response_id, true);
  refuseWhenVisitorMessagesFull(conv.visitor_messages);
  // While a person handles the conversation the AI never answers (a Resolved or Snoozed one reopens
  // first); a visitor asking for a person in words starts the handoff instead of an answer.
  if (conv.handled_by === 'human' || conv.status !== 'Open' || asksForPerson(req.text)) {
    const toPerson = await storeForPerson(claims, conv, req);
    if (toPerson) return toPerson;
  }

  const uploads = await visitorUploads(claims, req.attachments);
  const ids = uploads.map((u) => u.id);
  const attachments: UploadInfo[] = uploads.map((u) => ({ upload_id: u.id, filename: u.filename, content_type: u.content_type, size: u.size }));
  const job: AnswerJob = { question: req.text, channel_id: conv.channel_id, question_message_id: randomUUID(), answer_message_id: randomUUID() };
  const event = { type: 'question' as const, conversation_id: conversationId, client_message_id: cmid, response_id: randomUUID(), text: req.text, attachments };
  const storeQuestion = async (d: typeof db) => {
    const r = await insertQuestion(d, claims.accountId, {
      conversationId: conversationId!,
      responseId: event.response_id,
      clientMessageId: cmid,
      owner: instanceId(),
      leaseSeconds: getEnv().CHAT_ANSWER_LEASE_SECONDS,
      job,
      payload: event,
    });
    if (r.seq !== null) await attachUploads(d, claims.accountId, ids, conversationId!, job.question_message_id);
    return r;
  };
  // Without attachments the question is one statement: no transaction round trips.
  const stored = ids.length === 0 ? await storeQuestion(db) : await db.transaction((tx) => storeQuestion(tx as unknown as typeof db));
  if (stored.seq === null) return ack(stored.responseId, true);
  publishEvent({ ...event, seq: stored.seq });
  answerInBackground(
    { response_id: event.response_id, conversation_id: conversationId, account_id: claims.accountId, client_message_id: cmid, job, attempts: 1 },
    // Documents the visitor attached become answerable in this conversation (capped; see lib/uploads).
    () =>
      indexAttachedDocuments(claims.accountId, conversationId!, uploads).catch((e) =>
        console.error(`attachments of ${event.response_id} not indexed:`, (e as Error).message),
      ),
  );
  return ack(event.response_id, false);
}

/** The visitor's own complete uploads a message names, not attached elsewhere yet (not_found otherwise). */
async function visitorUploads(claims: Visitor, ids: string[] | undefined): Promise<UploadRow[]> {
  const unique = [...new Set(ids ?? [])];
  if (unique.length === 0) return [];
  const uploads = await getVisitorUploads(await getDb(), claims.accountId, claims.visitorId, unique);
  if (uploads.length !== unique.length) throw new AppError('not_found', 'An attachment is unknown, not yours, or already used.');
  return uploads;
}

/** The files of a message stored for the team: shown with it in the inbox and the transcript (not read by the AI). */
async function messageFiles(claims: Visitor, ids: string[] | undefined): Promise<MessageAttachment[]> {
  return (await visitorUploads(claims, ids)).map((u) => ({ id: u.id, filename: u.filename, content_type: u.content_type, size: u.size }));
}

/**
 * An ask the team receives instead of the AI: stored as the visitor's message (durable once
 * acknowledged, one row per client_message_id). Null when the AI handles the conversation after
 * all (the handoff is off, or the conversation reopened to the AI): the caller asks the AI.
 */
async function storeForPerson(claims: Visitor, conv: { id: string }, req: VisitorRequest<'ask'>): Promise<AskAck | null> {
  const visitor = { accountId: claims.accountId, conversationId: conv.id };
  const ack = (messageId: string, duplicate: boolean): AskAck => ({
    conversation_id: conv.id,
    client_message_id: req.client_message_id,
    response_id: messageId,
    duplicate,
    handled_by: 'human',
  });
  const retried = await getMessageByClientId(await getDb(), claims.accountId, conv.id, req.client_message_id, 'visitor');
  if (retried) return ack(retried.id, true);
  const files = await messageFiles(claims, req.attachments);
  if (asksForPerson(req.text) && (await handoffOf(claims.accountId)).enabled) await requestHandoff(visitor);
  const stored = await storeVisitorMessage(visitor, { client_message_id: req.client_message_id, text: req.text }, files);
  return stored.message ? ack(stored.message.id, false) : null;
}

/**
 * A message the visitor leaves that nobody answers by itself: kept in the conversation for the team
 * (by mail: auto-replies and bulk mail, which must never be answered; docs/contracts.md §17).
 */
export async function leaveMessage(claims: Visitor, req: VisitorRequest<'ask'>): Promise<AskAck> {
  const conv = await ownConversation(claims, req.conversation_id ?? '');
  const files = await messageFiles(claims, req.attachments);
  const kept = await keepVisitorMessage(
    { accountId: claims.accountId, conversationId: conv.id },
    { client_message_id: req.client_message_id, text: req.text },
    files,
  );
  return { conversation_id: conv.id, client_message_id: req.client_message_id, response_id: kept.message.id, duplicate: false, handled_by: kept.handled_by };
}

/** A mail for the team, not the AI (the account's "AI answers email" is off): the conversation waits for a person with the message. */
export async function askPersonByMail(claims: Visitor, req: VisitorRequest<'ask'>): Promise<AskAck> {
  const conv = await ownConversation(claims, req.conversation_id ?? '');
  const visitor = { accountId: claims.accountId, conversationId: conv.id };
  const files = await messageFiles(claims, req.attachments);
  await requestHandoff(visitor, { byMail: true });
  const stored = await storeVisitorMessage(visitor, { client_message_id: req.client_message_id, text: req.text }, files);
  if (!stored.message) throw new AppError('conflict', 'The conversation went back to the assistant meanwhile; the mail is processed again.');
  return { conversation_id: conv.id, client_message_id: req.client_message_id, response_id: stored.message.id, duplicate: false, handled_by: 'human' };
}

/** Whether the account lets visitors ask for a person (the widget's session says so). */
export async function handoffOf(accountId: number): Promise<{ enabled: boolean }> {
  return { enabled: (await getHandoffSettings(accountId)).enabled };
}

/** "Talk to a person" (docs/contracts.md §14): where the handoff stands, for the widget to show. */
export async function requestPerson(claims: Visitor, join: JoinRoom, req: VisitorRequest<'handoff:request'>): Promise<HandoffAck> {
  await ownConversation(claims, req.conversation_id);
  join(req.conversation_id);
  const r = await requestHandoff({ accountId: claims.accountId, conversationId: req.conversation_id });
  const a = r.availability;
  return {
    conversation_id: r.conversation_id,
    status: r.status,
    handled_by: r.handled_by,
    available: a.available,
    expected_wait_seconds: a.expected_wait_seconds,
    away: a.available ? null : { until: a.until, text: a.away_text },
  };
}

export async function rating(claims: Visitor, req: VisitorRequest<'rating'>) {
  await ownConversation(claims, req.conversation_id);
  const r = await rateConversation({ accountId: claims.accountId, conversationId: req.conversation_id }, req);
  return { conversation_id: r.conversation_id, rating: r.rating };
}

export async function visitorEmail(claims: Visitor, req: VisitorRequest<'visitor:email'>) {
  await ownConversation(claims, req.conversation_id);
  return setVisitorEmail({ accountId: claims.accountId, conversationId: req.conversation_id }, req);
}

export async function messagesSeen(claims: Visitor, req: VisitorRequest<'messages:seen'>) {
  await ownConversation(claims, req.conversation_id);
  const r = await markMessagesSeen({ accountId: claims.accountId, conversationId: req.conversation_id }, req);
  return { conversation_id: req.conversation_id, seen: r.seen };
}

/** The visitor's conversation as messages, newest HISTORY_PAGE answers before `before` (a response id). */
export async function history(claims: Visitor, join: JoinRoom, req: VisitorRequest<'history'>) {
  const conv = await ownConversation(claims, req.conversation_id);
  join(req.conversation_id);
  const db = await getDb();
  const [page, attachments, { showSources }] = await Promise.all([
    listVisitorHistory(db, claims.accountId, claims.visitorId, req.conversation_id, HISTORY_PAGE + 1, req.before),
    listConversationAttachments(db, claims.accountId, req.conversation_id),
    effectiveBotSettings(claims.accountId),
  ]);
  const more = page.length > HISTORY_PAGE;
  const turns = more ? page.slice(1) : page;
  // The stored messages between this page's responses (never notes): older than `before`, newer than the page's oldest when older pages remain.
  const stored = await listConversationMessages(db, claims.accountId, req.conversation_id, {
    withNotes: false,
    after: more ? turns[0]?.sort_at : null,
    beforeResponseId: req.before,
  });
  const declined = new Set(turns.filter((t) => t.declined).map((t) => t.id));
  const messages = messagesOf(turns, attachments, stored).map((m) => toHistoryMessage(m, showSources, declined));
  return {
    conversation_id: req.conversation_id,
    last_seq: conv.last_seq,
    status: conv.status,
    handled_by: conv.handled_by,
    messages,
    more,
  };
}

/** A message as the widget's history gives it; an answer's sources only when the account shows them. */
function toHistoryMessage(m: ConversationMessage, showSources: boolean, declined: Set<string>): HistoryMessage {
  return {
    created_at: m.created_at,
    response_id: m.response_id ?? m.message_id,
    likes: m.likes,
    dislikes: m.dislikes,
    mine: m.mine,
    message_id: m.message_id,
    role: roleOf(m.author),
    author: m.author,
    author_name: m.author_name,
    content: m.content,
    error: m.error,
    sources: sourcesForVisitors(m.sources, showSources),
    attachments: m.attachments.map(({ filename, content_type, size }) => ({ filename, content_type, size })),
    ...(m.author === 'ai' && m.response_id && declined.has(m.response_id) ? { declined: true } : {}),
  };
}

/** The conversation an answer of this visitor belongs to (not_found otherwise). */
async function answerConversation(claims: Visitor, responseId: string) {
  const db = await getDb();
  const response = await getVisitorResponse(db, claims.accountId, claims.visitorId, responseId);
  if (!response) throw notFound('answer');
  return { db, conversationId: response.conversation_id };
}

export async function feedback(claims: Visitor, req: VisitorRequest<'feedback'>) {
  const { db, conversationId } = await answerConversation(claims, req.response_id);
  // The change, its conversation event and its webhook event commit together.
  const { result, event, queued } = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as typeof db;
    const result = await toggleFeedback(tx, claims.accountId, req.response_id, claims.visitorId, req.value === 'like' ? 1 : -1);
    const event = await storeEvent(tx, {
      type: 'feedback' as const,
      conversation_id: conversationId,
      response_id: req.response_id,
      likes: result.likes,
      dislikes: result.dislikes,
    });
    return { result, event, queued: await recordResponseEvent(tx, claims.accountId, 'response.feedback', conversationId, req.response_id) };
  });
  webhookEventsCommitted(queued);
  publishEvent(event);
  return {
    response_id: req.response_id,
    likes: result.likes,
    dislikes: result.dislikes,
    mine: result.mine === 1 ? 'like' : result.mine === -1 ? 'dislike' : null,
  };
}

export async function comment(claims: Visitor, req: VisitorRequest<'comment'>) {
  const { db, conversationId } = await answerConversation(claims, req.response_id);
  const { stored, event, queued } = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as typeof db;
    const stored = await insertComment(tx, claims.accountId, req.response_id, claims.visitorId, req.text, COMMENTS_PER_RESPONSE);
    if (!stored) throw new AppError('limit_reached', `An answer takes at most ${COMMENTS_PER_RESPONSE} comments.`);
    const event = await storeEvent(tx, { type: 'comment' as const, conversation_id: conversationId, response_id: req.response_id, comments: stored.comments });
    return { stored, event, queued: await recordResponseEvent(tx, claims.accountId, 'response.feedback', conversationId, req.response_id) };
  });
  webhookEventsCommitted(queued);
  publishEvent(event);
  return { response_id: req.response_id, comment_id: stored.commentId, comments: stored.comments };
}
