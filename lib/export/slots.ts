import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ReadTarget } from '../../db/read';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { getRedis, redisKey } from '../redis/client';
import { processSingleton } from '../core/process';

/**
 * Admission of exports (docs/contracts.md §10 limits). An export holds a database connection for as long
 * as its client reads, so at most EXPORTS_PER_ACCOUNT run at once per account and at most
 * `exportsPerInstance()` per instance and pool (the primary's, the read replica's), a share of that
 * pool that leaves the rest to lists, the dashboard and chat: exports stalled on the replica never
 * refuse a member's export from the primary. Beyond: 429 with Retry-After.
 *
 * The instance count is per process by nature (it guards this process's pool) and lives on
 * globalThis (server.ts and Next's bundles hold separate module copies). The per-account count is
 * shared by every instance through Redis when REDIS_URL is set (a lease per export that expires if
 * its instance dies); without Redis, or while Redis is away, it is counted per instance.
 */
export type ExportSlot = { release: () => void };

type Local = { running: Record<ReadTarget, number>; perAccount: Map<number, number> };
const local = (): Local => processSingleton('svc.exportSlots', () => ({ running: { primary: 0, replica: 0 }, perAccount: new Map() }));

/**
 * Exports one instance runs at once on one pool: at most half of it (both pools have DATABASE_POOL_SIZE; on PGlite, which has no pool and
 * spools each export to a file, the same number bounds the open files and readers).
 */
export function exportsPerInstance(): number {
  const env = getEnv();
  const share = Math.max(1, Math.floor(env.DATABASE_POOL_SIZE / 2));
  return Math.min(env.EXPORTS_PER_INSTANCE ?? share, share);
}

/** Exports running in this process now, on one pool or on both (metrics and tests). */
export function runningExports(on?: ReadTarget): number {
  const { running } = local();
  return on ? running[on] : running.primary + running.replica;
}

/** A lease lasts this long unless renewed; an instance renews its leases every third of it. */
const LEASE_MS = 30_000;

/** Drops expired leases, then adds this one if fewer than the limit remain. Time is Redis's own. */
const ACQUIRE_LUA = `
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
if redis.call('zcard', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('zadd', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('pexpire', KEYS[1], ARGV[2])
return 1
`;
const RENEW_LUA = `
local t = redis.call('time')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('zadd', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('pexpire', KEYS[1], ARGV[1])
return 1
`;
type LeaseRedis = Redis & {
  svcExportAcquire(key: string, limit: number, ms: number, id: string): Promise<number>;
  svcExportRenew(key: string, ms: number, id: string): Promise<number>;
};
const defined = new WeakSet<Redis>();

function leaseRedis(): LeaseRedis | null {
  const redis = getRedis();
  if (!redis) return null;
  if (!defined.has(redis)) {
    redis.defineCommand('svcExportAcquire', { numberOfKeys: 1, lua: ACQUIRE_LUA });
    redis.defineCommand('svcExportRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    defined.add(redis);
  }
  return redis as LeaseRedis;
}

function refuse(what: string): never {
  const seconds = Math.ceil(getEnv().EXPORT_STALL_SECONDS);
  throw new AppError('rate_limited', `Too many exports running ${what}; retry in ${seconds} s.`, { headers: { 'Retry-After': String(seconds) } });
}

/** Takes a slot for one export of `accountId`, or throws the 429. `release()` may be called more than once. */
export async function acquireExportSlot(accountId: number, on: ReadTarget): Promise<ExportSlot> {
  const state = local();
  const perAccount = getEnv().EXPORTS_PER_ACCOUNT;
  if (state.running[on] >= exportsPerInstance()) refuse('on this server');
  const mine = state.perAccount.get(accountId) ?? 0;
  if (mine >= perAccount) refuse('for this account');
  state.running[on]++;
  state.perAccount.set(accountId, mine + 1);
  let released = false;
  let lease: { key: string; id: string; timer: NodeJS.Timeout } | null = null;
  const release = () => {
    if (released) return;
    released = true;
    state.running[on]--;
    const left = (state.perAccount.get(accountId) ?? 1) - 1;
    if (left > 0) state.perAccount.set(accountId, left);
    else state.perAccount.delete(accountId);
    if (lease) {
      clearInterval(lease.timer);
      getRedis()
        ?.zrem(lease.key, lease.id)
        .catch(() => {});
    }
  };
  const redis = leaseRedis();
  if (redis) {
    const key = redisKey('exports', String(accountId));
    const id = randomUUID();
    let granted: number | null = null;
    // Redis away: the per-instance count above is the limit for these minutes.
    try {
      granted = await redis.svcExportAcquire(key, perAccount, LEASE_MS, id);
    } catch {
      granted = null;
    }
    if (granted === 0) {
      release();
      refuse('for this account');
    }
    if (granted === 1) {
      const timer = setInterval(() => {
        redis.svcExportRenew(key, LEASE_MS, id).catch(() => {});
      }, LEASE_MS / 3);
      timer.unref();
      lease = { key, id, timer };
    }
  }
  return { release };
}
