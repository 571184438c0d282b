import { randomUUID } from 'node:crypto';
import { getDb } from '../../db/client';
import { claimExpiredAnswers, insertChatResponse, releaseAnswerLeases, renewAnswerLeases, type ClaimedAnswer } from '../../db/queries/chat';
import { waitToRetryWrite } from '../ops/database-away';
import { getEnv } from '../env';
import { isDraining } from '../core/drain';
import { metrics } from '../ops/metrics';
import { appendLiveEvent, publishEvent } from '../conversations/events';
import type { ConversationEvent } from '../conversations/shapes';
import { EngineError, type Source } from './engine';
import { answerEngine } from './engines';
import { changeWithEvent, recordResponseEvent, webhookEventsCommitted } from '../webhooks/events';
import { processSingleton } from '../core/process';

/**
 * The answer runner: runs an engine for a stored question and stores its outcome exactly once.
 * Each answer in flight is leased to the instance that runs it (chat_answers); a survivor takes
 * over lapsed leases, and a draining instance hands its answers over (finishAnswers).
 */

/** Delta events sent per answer at most; the rest arrives with answer.done. */
export const MAX_DELTAS_PER_ANSWER = 5000;
/** A survivor answers a taken-over question again this many times at most, then stores it as failed. */
const MAX_ATTEMPTS = 2;

/**
 * This process's answers in flight (per process by nature: each is owned by the instance that
 * runs it, under a lease in the database). The instance id names the lease owner.
 */
type Running = { conversationId: string; done: Promise<void> };
type Local = { instanceId: string; running: Map<string, Running>; timer?: NodeJS.Timeout };
function local(): Local {
  return processSingleton('svc.chatAnswers', (): Local => ({ instanceId: `${process.pid}-${randomUUID()}`, running: new Map() }));
}

export function instanceId(): string {
  return local().instanceId;
}

/**
 * Answers a question this instance has just stored under its own lease (the question's ask),
 * streaming deltas; `before` runs first (what the question needs, e.g. its attachments indexed).
 */
export function answerInBackground(a: ClaimedAnswer, before: () => Promise<unknown>): void {
  track(
    a.response_id,
    a.conversation_id,
    (async () => {
      await before();
      await produceAnswer(a, true);
    })(),
  );
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
  let declined = false;
  let failure: string | null = null;
  let tail = '';
  try {
    const answer = await answerEngine().answer({
      accountId: a.account_id,
      conversationId: a.conversation_id,
      question: a.job.question,
      signal: AbortSignal.timeout(120_000),
    });
    sources = answer.sources;
    showSources = answer.showSources;
    declined = answer.declined;
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
          await appendLiveEvent(db, { type: 'answer.delta', ...base, text: piece });
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
        sending ??= sendPending().finally(() => {
          sending = null;
        });
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
  await storeOutcome(a, failure === null ? { answer: text, sources, showSources, declined, tail } : { error: failure });
}

/** How a question ends when a member took the conversation over while the AI was answering it. */
export const HANDED_OVER = 'A person from the team has joined and will answer you.';

/**
 * Stores the outcome and only then sends answer.done / answer.error. The write is retried until
 * it lands (the outcome stays in memory meanwhile; while the database is away, it waits for the
 * process's one probe, lib/ops/database-away); a response stored first elsewhere (a
 * takeover) wins and this one is dropped, so each question ends exactly once. `tail`, the
 * answer's last delta not yet sent, takes the seq before answer.done's in the same statement and
 * is sent just before it.
 */
async function storeOutcome(
  a: ClaimedAnswer,
  outcome: { answer: string; sources: Source[]; showSources: boolean; declined: boolean; tail?: string } | { error: string },
) {
  const base = { conversation_id: a.conversation_id, client_message_id: a.client_message_id, response_id: a.response_id };
  const draft =
    'error' in outcome
      ? { type: 'answer.error' as const, ...base, message: outcome.error }
      : { type: 'answer.done' as const, ...base, answer: outcome.answer, sources: outcome.sources, declined: outcome.declined };
  // A member who took over while the engine ran answers instead: the AI's text never follows "<name> joined".
  const handedOver = 'error' in outcome ? null : { type: 'answer.error' as const, ...base, message: HANDED_OVER };
  const tail = 'tail' in outcome ? outcome.tail : undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const db = await getDb();
      // The stored response (answered or failed) and its webhook event commit together.
      const { result: stored, queued } = await changeWithEvent(
        db,
        a.account_id,
        'response.created',
        (d) =>
          insertChatResponse(
            d,
            a.account_id,
            {
              id: a.response_id,
              conversationId: a.conversation_id,
              channelId: a.job.channel_id,
              question: a.job.question,
              answer: 'error' in outcome ? '' : outcome.answer,
              error: 'error' in outcome ? outcome.error : null,
              clientMessageId: a.client_message_id,
              questionMessageId: a.job.question_message_id ?? randomUUID(),
              answerMessageId: a.job.answer_message_id ?? randomUUID(),
              sources: 'error' in outcome ? [] : outcome.sources,
              declined: 'error' in outcome ? false : outcome.declined,
            },
            { kind: draft.type, payload: draft },
            tail ? 1 : 0,
            handedOver && { error: HANDED_OVER, kind: handedOver.type, payload: handedOver },
          ),
        (tx, stored) =>
          stored === null ? Promise.resolve(0) : recordResponseEvent(tx, a.account_id, 'response.created', a.conversation_id, a.response_id, true),
      );
      webhookEventsCommitted(queued);
      if (stored !== null) {
        const { seq } = stored;
        if (handedOver && stored.kind === handedOver.type) publishEvent({ ...handedOver, seq });
        else {
          if (tail) publishEvent({ type: 'answer.delta', ...base, text: tail, seq: seq - 1 });
          // Stored with its sources (the account's record); sent to visitors without them when the account hides them.
          publishEvent(
            (draft.type === 'answer.done' && !('error' in outcome) && !outcome.showSources
              ? { ...draft, sources: [], seq }
              : { ...draft, seq }) as ConversationEvent,
          );
        }
      }
      return;
    } catch (e) {
      if (attempt % 20 === 0) console.error(`answer ${a.response_id} not stored yet (attempt ${attempt + 1}); retrying:`, (e as Error).message);
      await waitToRetryWrite(e, attempt);
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
    const work = a.attempts > MAX_ATTEMPTS ? storeOutcome(a, { error: 'The answer was interrupted; please ask again.' }) : produceAnswer(a, false);
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
    void leaseRound()
      .catch(() => {})
      .finally(() => {
        busy = false;
      });
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
  if (l.timer) {
    clearInterval(l.timer);
    l.timer = undefined;
  }
  const renew = setInterval(() => {
    void getDb()
      .then((db) => renewAnswerLeases(db, l.instanceId, [...l.running.keys()], getEnv().CHAT_ANSWER_LEASE_SECONDS))
      .catch(() => {});
  }, 2000);
  let grace: NodeJS.Timeout | undefined;
  try {
    const all = Promise.all([...l.running.values()].map((r) => r.done));
    await Promise.race([
      all,
      new Promise((r) => {
        grace = setTimeout(r, graceMs);
      }),
    ]);
  } finally {
    clearInterval(renew);
    clearTimeout(grace); // else an idle stop still waits out the whole grace period
  }
  const left = [...l.running.keys()];
  if (left.length > 0) await releaseAnswerLeases(await getDb(), l.instanceId, left).catch(() => {});
  return left.length;
}
