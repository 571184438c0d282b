import type { Sql } from 'postgres';
import { AppError, fromDatabaseError } from '../lib/core/errors';
import { getLogger } from '../lib/core/logger';
import { processSingleton } from '../lib/core/process';
import { getEnv } from '../lib/env';
import { type Db, getDatabase, getDb, openDb, poolApplicationName, statementTimeoutMs } from './client';
import { replayPosition, walPosition } from './queries/health';
import * as schema from './schema';

/**
 * Where a read may go (CONTRACTS §19): `replica` for the heavy reads an API key makes (lists,
 * exports, insights), `primary` for everything that must see its own writes (the dashboard).
 */
export type ReadTarget = 'replica' | 'primary';

const SAMPLE_EVERY_MS = 2000;

type Replica = {
  db: Db;
  client: Sql;
  /** False while the replica does not answer or lags more than DATABASE_READ_MAX_LAG_SECONDS. */
  usable: boolean;
  lagSeconds: number | null;
  /** The primary's WAL position over the last samples: [time ms, bytes], oldest first. */
  history: Array<[number, bigint]>;
};

/** The lag of a replica that replayed up to `replayed`: how long ago the primary was there (0 when it caught up). */
export function lagOf(history: ReadonlyArray<[number, bigint]>, replayed: bigint, now: number): number {
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]![1] <= replayed) {
      // Replayed at least what the primary had at history[i]: behind by the time since the next sample, if any.
      const next = history[i + 1];
      return next ? (now - next[0]) / 1000 : 0;
    }
  }
  return history.length ? (now - history[0]![0]) / 1000 : 0;
}

async function openReplica(url: string): Promise<Replica> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const env = getEnv();
  const timeout = statementTimeoutMs();
  const client = postgres(url, {
    onnotice: () => {},
    connect_timeout: 5,
    max: env.DATABASE_POOL_SIZE,
    connection: { application_name: poolApplicationName(), ...(timeout ? { statement_timeout: timeout } : {}) },
  });
  const replica: Replica = { db: drizzle(client, { schema }) as unknown as Db, client, usable: false, lagSeconds: null, history: [] };
  const sample = async () => {
    const now = Date.now();
    const keep = (env.DATABASE_READ_MAX_LAG_SECONDS + 10) * 1000;
    try {
      replica.history.push([now, await walPosition((await getDatabase()).db)]);
      while (replica.history.length > 1 && replica.history[0]![0] < now - keep) replica.history.shift();
    } catch {
      return; // the primary is away: the replica's state stays as it was
    }
    try {
      const replayed = await replayPosition(replica.db);
      replica.lagSeconds = replayed === null ? 0 : lagOf(replica.history, replayed, now);
    } catch {
      replica.lagSeconds = null;
    }
    const usable = replica.lagSeconds !== null && replica.lagSeconds <= env.DATABASE_READ_MAX_LAG_SECONDS;
    if (usable !== replica.usable) {
      getLogger().warn(
        { lag_seconds: replica.lagSeconds },
        usable ? 'read replica back: heavy reads go to it' : 'read replica away or lagging: heavy reads go to the primary',
      );
    }
    replica.usable = usable;
  };
  await sample();
  setInterval(() => void sample(), SAMPLE_EVERY_MS).unref();
  return replica;
}

/** This process's read replica: null without DATABASE_READ_URL, or without DATABASE_URL (the embedded database has none). */
function replica(): Promise<Replica> | null {
  const env = getEnv();
  if (!env.DATABASE_URL || !env.DATABASE_READ_URL) return null;
  const url = env.DATABASE_READ_URL;
  return processSingleton('svc.database.replica', () => openReplica(url));
}

/** Where replica-eligible reads go right now, and the replica's last measured lag (for /metrics). */
export async function readState(): Promise<{ target: ReadTarget; lagSeconds: number | null } | null> {
  const r = replica();
  if (!r) return null;
  const { usable, lagSeconds } = await r;
  return { target: usable ? 'replica' : 'primary', lagSeconds };
}

/** The handle a read for `target` uses, and which server it is on: the replica while it answers and keeps up, else the primary. */
export async function readDb(target: ReadTarget): Promise<{ db: Db; on: ReadTarget }> {
  const r = target === 'replica' ? replica() : null;
  if (r) {
    const rep = await r;
    if (rep.usable) return { db: rep.db, on: 'replica' };
  }
  return { db: (await getDatabase()).db, on: 'primary' };
}

/**
 * Runs a read on `target`'s handle; when the replica fails to answer, it is set aside until a sample
 * finds it back, and the read runs again on the primary (reads are idempotent).
 */
export async function onReadDb<T>(target: ReadTarget, fn: (db: Db) => Promise<T>): Promise<T> {
  const r = target === 'replica' ? replica() : null;
  const rep = r ? await r : null;
  if (!rep?.usable) return fn(openDb() ?? (await getDb()));
  try {
    return await fn(rep.db);
  } catch (e) {
    const mapped = fromDatabaseError(e);
    if (!(mapped instanceof AppError) || mapped.code !== 'unavailable') throw e;
    rep.usable = false;
    getLogger().warn({}, 'read replica failed a read: heavy reads go to the primary');
    return fn((await getDatabase()).db);
  }
}
