import { randomUUID } from 'node:crypto';
import { getDb } from '../../db/client';
import {
  claimDueDeliveries,
  expireHeldDeliveries,
  markAttemptFailed,
  markDelivered,
  pruneFinishedEvents,
  releaseDeliveryLeases,
  releaseLeasesExcept,
  type ClaimedDelivery,
} from '../../db/queries/webhooks';
import { recordOutcomeWithin, startBackgroundLoop, type BackgroundLoop } from '../core/loop';
import { processSlot } from '../core/process';
import { attemptDelivery } from './delivery';
import {
  HELD_TOO_LONG,
  IN_FLIGHT_PER_ACCOUNT,
  IN_FLIGHT_PER_ENDPOINT,
  IN_FLIGHT_TOTAL,
  LEASE_SECONDS,
  pauseAfterMs,
  POLL_MS,
  PRUNE_BATCH,
  PRUNE_EVERY_MS,
  REPLAY_HOURS,
  RETENTION_DAYS,
  retryDelayMs,
} from './rules';
import { setWebhookWake } from '../conversations/outbox';
import { getEnv } from '../env';

/**
 * The delivery worker every instance runs (docs/contracts.md §11). It leases due deliveries from the
 * outbox (FOR UPDATE SKIP LOCKED, so each goes to one instance), sends them in parallel — at most
 * IN_FLIGHT_PER_ENDPOINT per endpoint and IN_FLIGHT_PER_ACCOUNT per account, so slow receivers
 * hold only their own account's share of the slots — and records each outcome. It never throws:
 * while the database is away it logs once and tries again later.
 * State is per process by nature (what this instance is sending right now).
 */
type Worker = {
  owner: string;
  loop: BackgroundLoop;
  inFlight: Map<string, { endpointId: string; abort: AbortController }>;
  perEndpoint: Map<string, number>;
  perAccount: Map<string, number>;
  /** A claim failed: it may have committed, leasing deliveries this worker does not know it holds. */
  claimUnsure: boolean;
};

const worker = processSlot<Worker>('svc.webhookWorker');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startWebhookWorker(): void {
  if (worker.get()) return;
  let prunedAt = 0;
  const w: Worker = {
    owner: `${process.pid}-${randomUUID()}`,
    inFlight: new Map(),
    perEndpoint: new Map(),
    perAccount: new Map(),
    claimUnsure: false,
    loop: startBackgroundLoop({
      pollMs: POLL_MS,
      step: async () => {
        await claimAndSend(w);
        if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
          prunedAt = Date.now();
          await pruneWebhookEvents();
        }
        return false;
      },
      onDown: (e) => console.error(`webhook worker: cannot read due deliveries (${(e as Error).message}); retrying`),
      onUp: () => console.log('webhook worker: database reachable again; deliveries resume'),
    }),
  };
  worker.set(w);
  setWebhookWake(w.loop.wake);
}

/**
 * Retention (any instance may do it): deliveries held longer than REPLAY_HOURS become failed, then
 * finished events older than RETENTION_DAYS go, a batch at a time.
 */
export async function pruneWebhookEvents(): Promise<number> {
  await expireHeldDeliveries(await getDb(), REPLAY_HOURS, HELD_TOO_LONG);
  let total = 0;
  for (let n = PRUNE_BATCH; n === PRUNE_BATCH; ) {
    n = await pruneFinishedEvents(await getDb(), RETENTION_DAYS, PRUNE_BATCH);
    total += n;
  }
  return total;
}

async function claimAndSend(w: Worker) {
  const free = IN_FLIGHT_TOTAL - w.inFlight.size;
  if (free <= 0 || w.loop.stopping) return;
  if (w.claimUnsure) {
    const released = await releaseLeasesExcept(await getDb(), w.owner, [...w.inFlight.keys()]);
    if (released > 0) console.log(`webhook worker: gave back ${released} deliveries leased by a claim whose reply was lost`);
  }
  // Unsure until the claim's reply arrives: one that fails may still have committed.
  w.claimUnsure = true;
  const claimed = await claimDueDeliveries(await getDb(), w.owner, {
    leaseSeconds: LEASE_SECONDS,
    perEndpoint: IN_FLIGHT_PER_ENDPOINT,
    perAccount: IN_FLIGHT_PER_ACCOUNT,
    limit: free,
    busyEndpoints: Object.fromEntries(w.perEndpoint),
    busyAccounts: Object.fromEntries(w.perAccount),
  });
  w.claimUnsure = false;
  for (const d of claimed) void send(w, d);
}

async function send(w: Worker, d: ClaimedDelivery) {
  const abort = new AbortController();
  w.inFlight.set(d.id, { endpointId: d.endpoint_id, abort });
  const account = String(d.account_id);
  countUp(w.perEndpoint, d.endpoint_id);
  countUp(w.perAccount, account);
  try {
    const secrets = d.previous_secret ? [d.secret, d.previous_secret] : [d.secret];
    const result = await attemptDelivery(d.url, d.event_id, d.body, secrets, abort.signal);
    if (abort.signal.aborted) {
      await releaseDeliveryLeases(await getDb(), w.owner, [d.id]).catch(() => {});
      return;
    }
    const retryIn = result.ok ? null : retryDelayMs(d.attempts + 1);
    await recordOutcome(w, d, result, retryIn);
    if (retryIn !== null && retryIn < POLL_MS) setTimeout(w.loop.wake, retryIn + 1).unref();
  } catch (e) {
    console.error(`webhook delivery ${d.id} failed unexpectedly:`, e);
  } finally {
    w.inFlight.delete(d.id);
    countDown(w.perEndpoint, d.endpoint_id);
    countDown(w.perAccount, account);
    w.loop.wake(); // a slot is free, and the conversation's next event may now be due
  }
}

function countUp(counts: Map<string, number>, key: string) {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function countDown(counts: Map<string, number>, key: string) {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

/** Stores the outcome, retrying while the database is away (up to half the lease: then another instance may send it again). */
async function recordOutcome(w: Worker, d: ClaimedDelivery, r: Awaited<ReturnType<typeof attemptDelivery>>, retryIn: number | null) {
  const outcome = { statusCode: r.statusCode, latencyMs: r.latencyMs, error: r.error };
  const recorded = await recordOutcomeWithin(
    (LEASE_SECONDS * 1000) / 2,
    async () => {
      const db = await getDb();
      if (r.ok) {
        await markDelivered(db, w.owner, d.id, outcome);
        return;
      }
      const paused = await markAttemptFailed(
        db,
        w.owner,
        d.id,
        outcome,
        retryIn,
        pauseAfterMs(),
        `Paused automatically: every delivery failed for ${describe(pauseAfterMs())}; last error: ${r.error ?? 'unknown'}`,
      );
      if (paused) console.log(`webhook endpoint ${d.endpoint_id} paused: it has failed for ${describe(pauseAfterMs())}`);
    },
    (e) => console.error(`webhook delivery ${d.id}: outcome not recorded yet (${(e as Error).message}); retrying`),
  );
  if (!recorded) console.error(`webhook delivery ${d.id}: outcome not recorded; it will be sent again`);
}

function describe(ms: number): string {
  return ms >= 86_400_000 ? `${Math.round(ms / 86_400_000)} days` : ms >= 3_600_000 ? `${Math.round(ms / 3_600_000)} hours` : `${Math.round(ms / 1000)} s`;
}

/**
 * Stops the worker (SIGTERM drain): nothing new is claimed, deliveries in flight get up to the
 * attempt timeout to finish; any still running are interrupted and their leases given back.
 */
export async function stopWebhookWorker(): Promise<void> {
  const w = worker.get();
  if (!w) return;
  await w.loop.stop();
  const deadline = Date.now() + getEnv().WEBHOOK_TIMEOUT_MS + 1000;
  while (w.inFlight.size > 0 && Date.now() < deadline) await sleep(50);
  for (const f of w.inFlight.values()) f.abort.abort();
  while (w.inFlight.size > 0 && Date.now() < deadline + 2000) await sleep(20);
  setWebhookWake(undefined);
  worker.clear();
}
