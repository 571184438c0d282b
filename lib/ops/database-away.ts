import { getDb } from '../../db/client';
import { pingDatabase } from '../../db/queries/health';
import { fromDatabaseError } from '../core/errors';
import { getLogger } from '../core/logger';
import { processSingleton } from '../core/process';

/**
 * One "database away" probe per process (docs/contracts.md §9): a write that lost its database waits
 * here instead of retrying on a timer of its own. The first waiter starts the probe, which pings
 * with backoff; when the database answers, every waiter is released, spread over a jittered
 * window that grows with their number so hundreds of pending writes do not arrive at once.
 * Per process by nature (it watches this process's pool); on globalThis so the server and the
 * route handlers Next bundles share one.
 */
type Away = { probe: Promise<number> | null; waiting: number };
function away(): Away {
  return processSingleton('svc.databaseAway', (): Away => ({ probe: null, waiting: 0 }));
}

const FIRST_PING_MS = 250;
const MAX_PING_EVERY_MS = 2000;
const RELEASE_MS_PER_WAITER = 2;
const MAX_RELEASE_SPREAD_MS = 1000;
/** Retries of a write that failed for another reason than a lost connection. */
const MAX_OTHER_RETRIES = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when `e` says the database cannot be reached (connection refused, lost, shutting down). */
export function isDatabaseAway(e: unknown): boolean {
  return fromDatabaseError(e)?.code === 'unavailable';
}

async function probe(a: Away): Promise<number> {
  const since = Date.now();
  getLogger().warn({}, 'database away: pending writes wait for one probe');
  try {
    for (let every = FIRST_PING_MS; ; every = Math.min(MAX_PING_EVERY_MS, every * 2)) {
      await sleep(every * (0.75 + Math.random() / 2));
      try {
        await pingDatabase(await getDb());
        break;
      } catch {
        /* still away */
      }
    }
  } finally {
    a.probe = null;
  }
  getLogger().info({ away_ms: Date.now() - since, waiting: a.waiting }, 'database back: releasing pending writes');
  return a.waiting;
}

/** Resolves once the database answers again, after this waiter's jittered share of the release window. */
export async function databaseBack(): Promise<void> {
  const a = away();
  a.waiting++;
  let released: number;
  try {
    a.probe ??= probe(a);
    released = await a.probe;
  } finally {
    a.waiting--;
  }
  await sleep(Math.random() * Math.min(MAX_RELEASE_SPREAD_MS, released * RELEASE_MS_PER_WAITER));
}

/**
 * Waits before a failed write is tried again: for the database's return when it is away, a
 * short backoff otherwise; throws `e` when another failure has been retried enough.
 */
export async function waitToRetryWrite(e: unknown, attempt: number): Promise<void> {
  if (isDatabaseAway(e)) return databaseBack();
  if (attempt >= MAX_OTHER_RETRIES) throw e;
  await sleep(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)));
}
