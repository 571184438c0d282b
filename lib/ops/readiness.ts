import type { Redis } from 'ioredis';
import { getDatabase } from '../../db/client';
import { pingDatabase } from '../../db/queries/health';
import { getRedis } from '../redis/client';
import { isDraining } from '../core/drain';

/**
 * GET /readyz (docs/contracts.md §9): ready when this instance is not draining, the database answers and,
 * with REDIS_URL, Redis answers, each within 2 s. The load balancer stops sending new work on 503;
 * /healthz stays the liveness check (a failed dependency is no reason to restart the process).
 */
export type Readiness =
  | { ready: true; body: { status: 'ready' } }
  | { ready: false; body: { status: 'unavailable'; reason: string; checks: Record<string, string> } };

const TIMEOUT_MS = 2000;

function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** A connection still being opened (the first check of a process) is waited for, not failed. */
async function pingRedis(redis: Redis): Promise<string> {
  if (redis.status === 'wait' || redis.status === 'connecting' || redis.status === 'connect') {
    await new Promise<void>((resolve) => {
      redis.once('ready', () => resolve());
      setTimeout(resolve, TIMEOUT_MS).unref();
    });
  }
  return redis.ping();
}

const reasonOf = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!.slice(0, 200);

export async function checkReadiness(): Promise<Readiness> {
  const checks: Record<string, string> = {};
  const reasons: string[] = [];
  if (isDraining()) {
    checks.drain = 'draining';
    reasons.push('draining: this instance is shutting down');
  }
  const database = within((async () => pingDatabase((await getDatabase()).db))(), 'the database');
  const redis = getRedis();
  const [dbResult, redisResult] = await Promise.allSettled([database, redis ? within(pingRedis(redis), 'Redis') : Promise.resolve('skipped')]);
  checks.database = dbResult.status === 'fulfilled' ? 'ok' : reasonOf(dbResult.reason);
  if (dbResult.status === 'rejected') reasons.push(`database: ${checks.database}`);
  if (redis) {
    checks.redis = redisResult.status === 'fulfilled' ? 'ok' : reasonOf(redisResult.reason);
    if (redisResult.status === 'rejected') reasons.push(`redis: ${checks.redis}`);
  }
  if (reasons.length === 0) return { ready: true, body: { status: 'ready' } };
  return { ready: false, body: { status: 'unavailable', reason: reasons.join('; '), checks } };
}
