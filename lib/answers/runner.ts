import { createHash, randomUUID } from 'node:crypto';
import { getDb } from '../../db/client';
import {
  claimExpiredAnswers, findResponseByClientMessage, getVisitorConversation, getVisitorResponse, insertChatResponse, insertComment,
  insertConversationEvent, insertQuestion, insertWidgetConversation, listEventsAfter, listVisitorHistory, nextSeq, releaseAnswerLeases,
  renewAnswerLeases, toggleFeedback, type AnswerJob, type ClaimedAnswer,
} from '../../db/queries/chat';
import { attachUploads, getVisitorUploads } from '../../db/queries/uploads';
import { AppError, fromDatabaseError } from '../api/errors';
import type { WidgetClaims } from '../auth/widget-tokens';
import { getEnv } from '../env';
import { isDraining } from '../server/drain';
import { metrics } from '../ops/metrics';
import { indexAttachedDocuments } from '../uploads/service';
import { effectiveBotSettings } from '../bot/settings';
import { answerEngine, EngineError, sourcesForVisitors, type Source } from './engine';
import { publish, readLive } from '../chat/live';
import { changeWithEvent, recordConversationCreated, recordResponseEvent, webhookEventsCommitted } from '../webhooks/events';
import type { ClientRequest, HistoryMessage, ServerEvent, UploadInfo } from '../chat/protocol';

/** Delta events sent per answer at most; the rest arrives with answer.done. */
export const MAX_DELTAS_PER_ANSWER = 5000;
/** Events per `conversation:resume` page and responses per `history` page (hostile-input issue). */
export const RESUME_PAGE = 200;
export const HISTORY_PAGE = 50;
/** A survivor answers a taken-over question again this many times at most, then stores it as failed. */
const MAX_ATTEMPTS = 2;

const notFound = (what: string) => new AppError('not_found', `No ${what} of yours with that id.`);

/**
 * This process's answers in flight (per process by nature: each is owned by the instance that
 * runs it, under a lease in the database). The instance id names the lease owner.
 */
type Running = { conversationId: string; done: Promise<void> };
type Local = { instanceId: string; running: Map<string, Running>; timer?: NodeJS.Timeout };
const LOCAL = Symbol.for('svc.chatAnswers');
function local(): Local {
  const g = globalThis as { [LOCAL]?: Local };
  g[LOCAL] ??= { instanceId: `${process.pid}-${randomUUID()}`, running: new Map() };
  return g[LOCAL]!;
}

export function instanceId(): string {
  return local().instanceId;
}

export function answersInFlight(): number {
  return local().running.size;
}

type OwnConversation = NonNullable<Awaited<ReturnType<typeof getVisitorConversation>>>;

/** The visitor's own conversation (not_found otherwise). */
async function ownConversation(claims: WidgetClaims, conversationId: string): Promise<OwnConversation> {
  const conv = await getVisitorConversation(await getDb(), claims.accountId, claims.visitorId, conversationId);
  if (!conv) throw notFound('conversation');
  return conv;
}

/** Subscribes the caller's connection to a conversation's room (capped per connection by the caller). */
export type JoinRoom = (conversationId: string) => void;
/** Sends one event to the caller's connection only. */
export type SendEvent = (event: ServerEvent) => void;

/**
 * The id of the conversation a visitor's FIRST question starts, derived from the visitor and the
 * client message id: a retried first question (its acknowledgement lost) lands in the same one.
 */
function firstConversationId(accountId: number, visitorId: string, clientMessageId: string): string {
  const h = createHash('sha256').update(`${accountId}\n${visitorId}\n${clientMessageId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function titleOf(question: string): string {
  const oneLine = question.replace(/\s+/g, ' ').trim();
  return oneLine.length > 80 ? `${oneLine.slice(0, 79).replace(/\s+\S*$/, '')}…` : oneLine;
}

function refuseWhileDraining() {
  if (isDraining()) throw new AppError('unavailable', 'This server is restarting; your widget retries on another one.');
}

/**
 * The rate-limit check of an ask (lib/chat/socket.ts): `check` rejects with `rate_limited` when a
 * limit refuses. `overlap`: the check may run while the named conversation is read (the visitor's
 * last check left room, so a flood is refused before it reads anything; BENCHMARKS.md run 9).
 */
export type Admission = { check: () => Promise<void>; overlap: boolean };

/**
 * Accepts a question. It is acknowledged only once durable: the question event and the answer's
 * lease row are written in one statement (with the uploads, in one transaction). A retry with the
 * same client_message_id, on any instance, stores nothing new and returns the same response id.
 */
export async function ask(claims: WidgetClaims, join: JoinRoom, req: ClientRequest<'ask'>, admission: Admission) {
  refuseWhileDraining();
  const db = await getDb();
  let conversationId = req.conversation_id;
  // Reads of a conversation the visitor names may overlap the rate-limit check (admission.overlap);
  // nothing is written before it has passed.
  const reads = conversationId && admission.overlap
    ? Promise.all([ownConversation(claims, conversationId), findResponseByClientMessage(db, conversationId, req.client_message_id)])
    : null;
  reads?.catch(() => {}); // a refusal below wins; the reads' own failure is awaited after it
  await admission.check();
  if (!conversationId) {
    conversationId = firstConversationId(claims.accountId, claims.visitorId, req.client_message_id);
    const newId = conversationId;
    // The conversation and its webhook event commit together (CONTRACTS §11: an outbox).
    const { queued } = await changeWithEvent(db, claims.accountId, 'conversation.created',
      (d) => insertWidgetConversation(d, claims.accountId, {
        id: newId, channelId: claims.channelId, title: titleOf(req.text), visitorId: claims.visitorId, clientId: claims.clientId,
      }),
      (tx, created) => (created ? recordConversationCreated(tx, claims.accountId, newId, true) : Promise.resolve(0)));
    webhookEventsCommitted(queued);
  }
  const [conv, existing] = reads
    ? await reads
    : [await ownConversation(claims, conversationId), await findResponseByClientMessage(db, conversationId, req.client_message_id)];
  join(conversationId);
  const cmid = req.client_message_id;
  const ack = (responseId: string, duplicate: boolean) => ({ conversation_id: conversationId, client_message_id: cmid, response_id: responseId, duplicate });
  if (existing) return ack(existing.id, true);

  const ids = [...new Set(req.attachments ?? [])];
  const uploads = await getVisitorUploads(db, claims.accountId, claims.visitorId, ids);
  if (uploads.length !== ids.length) throw new AppError('not_found', 'An attachment is unknown, not yours, or already used.');
  const attachments: UploadInfo[] = uploads.map((u) => ({ upload_id: u.id, filename: u.filename, content_type: u.content_type, size: u.size }));
  const job: AnswerJob = { question: req.text, channel_id: conv.channel_id, question_message_id: randomUUID(), answer_message_id: randomUUID() };
  const event = { type: 'question' as const, conversation_id: conversationId, client_message_id: cmid, response_id: randomUUID(), text: req.text, attachments };
  const storeQuestion = async (d: typeof db) => {
    const r = await insertQuestion(d, claims.accountId, {
      conversationId: conversationId!, responseId: event.response_id, clientMessageId: cmid, owner: instanceId(),
      leaseSeconds: getEnv().CHAT_ANSWER_LEASE_SECONDS, job, payload: event,
    });
    if (r.seq !== null) await attachUploads(d, claims.accountId, ids, conversationId!, job.question_message_id);
    return r;
  };
  // Without attachments the question is one statement: no transaction round trips.
  const stored = ids.length === 0 ? await storeQuestion(db) : await db.transaction((tx) => storeQuestion(tx as unknown as typeof db));
  if (stored.seq === null) return ack(stored.responseId, true);
  publish({ ...event, seq: stored.seq });
  const answer = (async () => {
    // Documents the visitor attached become answerable in this conversation (capped; see lib/uploads).
    await indexAttachedDocuments(claims.accountId, conversationId!, uploads)
      .catch((e) => console.error(`attachments of ${event.response_id} not indexed:`, (e as Error).message));
    await produceAnswer({ response_id: event.response_id, conversation_id: conversationId!, account_id: claims.accountId, client_message_id: cmid, job, attempts: 1 }, true);
  })();
  track(event.response_id, conversationId, answer);
  return ack(event.response_id, false);
}

function track(responseId: string, conversationId: string, done: Promise<void>) {
  const running = local().running;
  const entry = { conversationId, done: done.catch((e) => console.error(`answer ${responseId} failed:`, e)).finally(() => running.delete(responseId)) };
  running.set(responseId, entry);
}

/**
 * Runs the engine and stores the outcome. Deltas take the conversation's next seq in order, one
 * round trip at a time (text produced meanwhile is coalesced into the next delta). A takeover (`streamDeltas` false) sends only the finished answer: the visitor may already have
 * seen the first owner's deltas.
 */
async function produceAnswer(a: ClaimedAnswer, streamDeltas: boolean) {
  metrics.answerInFlight(1);
  try {
    await runEngineAndStore(a, streamDeltas);
  } finally {
    metrics.answerInFlight(-1);
  }
}

async function runEngineAndStore(a: ClaimedAnswer, streamDeltas: boolean) {
  const base = { conversation_id: a.conversation_id, client_message_id: a.client_message_id, response_id: a.response_id };
  let text = '';
  let sources: Source[] = [];
  let showSources = true;
  let failure: string | null = null;
  let tail = '';
  try {
    const answer = await answerEngine().answer({ accountId: a.account_id, conversationId: a.conversation_id, question: a.job.question, signal: AbortSignal.timeout(120_000) });
    sources = answer.sources;
    showSources = answer.showSources;
    const db = await getDb();
    // Deltas are coalesced: while one takes its seq (a database round trip), the text the engine
    // produces meanwhile waits and goes out as the next delta. The first delta leaves at once; a
    // fast engine costs a few round trips per answer instead of one per word group, a slow one
    // (a model's tokens) still streams token by token.
    let sent = 0;
    let pending = '';
    let finished = false;
    let sending: Promise<void> | null = null;
    const sendPending = async () => {
      // Once the engine has finished, what is pending is the answer's last delta: it takes its seq
      // in answer.done's statement and leaves with it (storeOutcome), one round trip fewer.
      while (pending && !finished && sent < MAX_DELTAS_PER_ANSWER) {
        const piece = pending;
        pending = '';
        sent++;
        try {
          publish({ type: 'answer.delta', ...base, text: piece, seq: await nextSeq(db, a.conversation_id) });
        } catch {
          sent = MAX_DELTAS_PER_ANSWER; // the database is away: the answer still arrives whole with answer.done
        }
      }
      if (sent >= MAX_DELTAS_PER_ANSWER) pending = '';
    };
    try {
      for await (const delta of answer.deltas) {
        text += delta;
        if (!streamDeltas || sent >= MAX_DELTAS_PER_ANSWER) continue;
        pending += delta;
        sending ??= sendPending().finally(() => { sending = null; });
      }
    } finally {
      finished = true;
      while (sending) await sending;
    }
    tail = pending;
  } catch (e) {
    failure = e instanceof EngineError ? e.message : 'The answer could not be produced.';
    if (!(e instanceof EngineError)) console.error(`answer ${a.response_id} failed:`, e);
  }
  await storeOutcome(a, failure === null ? { answer: text, sources, showSources, tail } : { error: failure });
}

/**
 * Stores the outcome and only then sends answer.done / answer.error. The write is retried until
 * it lands (the outcome stays in memory meanwhile); a response stored first elsewhere (a
 * takeover) wins and this one is dropped, so each question ends exactly once. `tail`, the
 * answer's last delta not yet sent, takes the seq before answer.done's in the same statement and
 * is sent just before it.
 */
async function storeOutcome(a: ClaimedAnswer, outcome: { answer: string; sources: Source[]; showSources: boolean; tail?: string } | { error: string }) {
  const base = { conversation_id: a.conversation_id, client_message_id: a.client_message_id, response_id: a.response_id };
  const draft = 'error' in outcome
    ? { type: 'answer.error' as const, ...base, message: outcome.error }
    : { type: 'answer.done' as const, ...base, answer: outcome.answer, sources: outcome.sources };
  const tail = 'tail' in outcome ? outcome.tail : undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const db = await getDb();
      // The stored response (answered or failed) and its webhook event commit together.
      const { result: seq, queued } = await changeWithEvent(db, a.account_id, 'response.created',
        (d) => insertChatResponse(d, a.account_id, {
          id: a.response_id, conversationId: a.conversation_id, channelId: a.job.channel_id, question: a.job.question,
          answer: 'error' in outcome ? '' : outcome.answer, error: 'error' in outcome ? outcome.error : null,
          clientMessageId: a.client_message_id, questionMessageId: a.job.question_message_id ?? randomUUID(),
          answerMessageId: a.job.answer_message_id ?? randomUUID(), sources: 'error' in outcome ? [] : outcome.sources,
        }, { kind: draft.type, payload: draft }, tail ? 1 : 0),
        (tx, stored) => (stored === null ? Promise.resolve(0) : recordResponseEvent(tx, a.account_id, 'response.created', a.conversation_id, a.response_id, true)));
      webhookEventsCommitted(queued);
      if (seq !== null) {
        if (tail) publish({ type: 'answer.delta', ...base, text: tail, seq: seq - 1 });
        // Stored with its sources (the account's record); sent to visitors without them when the account hides them.
        publish((draft.type === 'answer.done' && !('error' in outcome) && !outcome.showSources ? { ...draft, sources: [], seq } : { ...draft, seq }) as ServerEvent);
      }
      return;
    } catch (e) {
      if (attempt % 20 === 0) console.error(`answer ${a.response_id} not stored yet (attempt ${attempt + 1}); retrying:`, (e as Error).message);
      if (!fromDatabaseError(e) && attempt >= 10) throw e;
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** Math.min(attempt, 5))));
    }
  }
}

/** One lease round: renew ours, take over lapsed ones (never while draining). */
async function leaseRound() {
  const env = getEnv();
  const l = local();
  const db = await getDb();
  await renewAnswerLeases(db, l.instanceId, [...l.running.keys()], env.CHAT_ANSWER_LEASE_SECONDS).catch(() => {});
  if (isDraining()) return;
  const claimed = await claimExpiredAnswers(db, l.instanceId, env.CHAT_ANSWER_LEASE_SECONDS, 20).catch(() => [] as ClaimedAnswer[]);
  for (const a of claimed) {
    if (l.running.has(a.response_id)) continue;
    const work = a.attempts > MAX_ATTEMPTS
      ? storeOutcome(a, { error: 'The answer was interrupted; please ask again.' })
      : produceAnswer(a, false);
    track(a.response_id, a.conversation_id, work);
  }
}

/** Starts the lease loop of this instance: renewals and takeovers every third of a lease. */
export function startAnswerLeases() {
  const l = local();
  if (l.timer) return;
  const every = Math.max(500, (getEnv().CHAT_ANSWER_LEASE_SECONDS * 1000) / 3);
  let busy = false;
  const tick = () => {
    if (busy) return;
    busy = true;
    void leaseRound().catch(() => {}).finally(() => { busy = false; });
  };
  l.timer = setInterval(tick, every);
  l.timer.unref();
  tick();
}

/**
 * Drain: waits for this instance's answers to finish, up to `graceMs`; what is still running
 * then is released so a survivor takes it over at once.
 */
export async function finishAnswers(graceMs: number) {
  const l = local();
  if (l.timer) { clearInterval(l.timer); l.timer = undefined; }
  const renew = setInterval(() => {
    void getDb().then((db) => renewAnswerLeases(db, l.instanceId, [...l.running.keys()], getEnv().CHAT_ANSWER_LEASE_SECONDS)).catch(() => {});
  }, 2000);
  let grace: NodeJS.Timeout | undefined;
  try {
    const all = Promise.all([...l.running.values()].map((r) => r.done));
    await Promise.race([all, new Promise((r) => { grace = setTimeout(r, graceMs); })]);
  } finally {
    clearInterval(renew);
    clearTimeout(grace); // else an idle stop still waits out the whole grace period
  }
  const left = [...l.running.keys()];
  if (left.length > 0) await releaseAnswerLeases(await getDb(), l.instanceId, left).catch(() => {});
  return left.length;
}

/**
 * `conversation:resume`: subscribes, then sends the events after `last_seq` — stored ones from
 * the database, live deltas from the shared live buffer (so deltas of an answer streaming on
 * another instance are included) — one page at a time. `more` says another request is needed,
 * from `through_seq`.
 */
export async function resume(claims: WidgetClaims, join: JoinRoom, send: SendEvent, req: ClientRequest<'conversation:resume'>) {
  const conv = await ownConversation(claims, req.conversation_id);
  join(req.conversation_id);
  const [stored, live] = await Promise.all([
    listEventsAfter(await getDb(), req.conversation_id, req.last_seq, RESUME_PAGE + 1),
    readLive(req.conversation_id, req.last_seq, RESUME_PAGE + 1),
  ]);
  const bySeq = new Map<number, ServerEvent>();
  for (const e of live) bySeq.set(e.seq, e);
  for (const e of stored) bySeq.set(e.seq, e.payload as ServerEvent);
  const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  const page = all.slice(0, RESUME_PAGE);
  const { showSources } = await effectiveBotSettings(claims.accountId);
  for (const e of page) send(e.type === 'answer.done' ? { ...e, sources: sourcesForVisitors(e.sources, showSources) } : e);
  const through = page.at(-1)?.seq ?? req.last_seq;
  return { conversation_id: req.conversation_id, last_seq: Math.max(conv.last_seq, through), through_seq: through, more: all.length > RESUME_PAGE };
}

/** The visitor's conversation as messages, newest HISTORY_PAGE answers before `before` (a response id). */
export async function history(claims: WidgetClaims, join: JoinRoom, req: ClientRequest<'history'>) {
  const conv = await ownConversation(claims, req.conversation_id);
  join(req.conversation_id);
  const [page, { showSources }] = await Promise.all([
    listVisitorHistory(await getDb(), claims.accountId, claims.visitorId, req.conversation_id, HISTORY_PAGE + 1, req.before),
    effectiveBotSettings(claims.accountId),
  ]);
  const more = page.length > HISTORY_PAGE;
  const rows = more ? page.slice(1) : page;
  const messages: HistoryMessage[] = rows.flatMap((r) => {
    const common = { created_at: r.created_at, response_id: r.id, likes: r.likes, dislikes: r.dislikes,
      mine: r.my_feedback === 1 ? 'like' as const : r.my_feedback === -1 ? 'dislike' as const : null };
    return [
      { ...common, message_id: r.question_message_id, role: 'user' as const, content: r.question, error: null, sources: [] },
      { ...common, message_id: r.answer_message_id, role: 'assistant' as const, content: r.answer, error: r.error,
        sources: sourcesForVisitors((r.sources as Source[] | null) ?? [], showSources) },
    ];
  });
  return { conversation_id: req.conversation_id, last_seq: conv.last_seq, messages, more };
}

/** The conversation an answer of this visitor belongs to (not_found otherwise). */
async function answerConversation(claims: WidgetClaims, responseId: string) {
  const db = await getDb();
  const response = await getVisitorResponse(db, claims.accountId, claims.visitorId, responseId);
  if (!response) throw notFound('answer');
  return { db, conversationId: response.conversation_id };
}

export async function feedback(claims: WidgetClaims, req: ClientRequest<'feedback'>) {
  const { db, conversationId } = await answerConversation(claims, req.response_id);
  // The change, its conversation event and its webhook event commit together.
  const { result, event, seq, queued } = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as typeof db;
    const result = await toggleFeedback(tx, claims.accountId, req.response_id, claims.visitorId, req.value === 'like' ? 1 : -1);
    const event = { type: 'feedback' as const, conversation_id: conversationId, response_id: req.response_id, likes: result.likes, dislikes: result.dislikes };
    const seq = await insertConversationEvent(tx, conversationId, 'feedback', event);
    return { result, event, seq, queued: await recordResponseEvent(tx, claims.accountId, 'response.feedback', conversationId, req.response_id) };
  });
  webhookEventsCommitted(queued);
  publish({ ...event, seq });
  return { response_id: req.response_id, likes: result.likes, dislikes: result.dislikes,
    mine: result.mine === 1 ? 'like' : result.mine === -1 ? 'dislike' : null };
}

export async function comment(claims: WidgetClaims, req: ClientRequest<'comment'>) {
  const { db, conversationId } = await answerConversation(claims, req.response_id);
  const { stored, event, seq, queued } = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as typeof db;
    const stored = await insertComment(tx, claims.accountId, req.response_id, claims.visitorId, req.text);
    const event = { type: 'comment' as const, conversation_id: conversationId, response_id: req.response_id, comments: stored.comments };
    const seq = await insertConversationEvent(tx, conversationId, 'comment', event);
    return { stored, event, seq, queued: await recordResponseEvent(tx, claims.accountId, 'response.feedback', conversationId, req.response_id) };
  });
  webhookEventsCommitted(queued);
  publish({ ...event, seq });
  return { response_id: req.response_id, comment_id: stored.commentId, comments: stored.comments };
}
