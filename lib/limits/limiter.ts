import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../api/errors';
import { getRedis, redisKey } from '../redis/client';

/**
 * Every rate limit of the service, through rate-limiter-flexible. Without REDIS_URL a memory
 * store (one process); with it a Redis store shared by every instance, with an in-memory
 * insurance limiter for the minutes Redis is away (CONTRACTS §9).
 *
 * A limiter is created once per name and kept on globalThis (server.ts and Next's bundles hold
 * separate module copies; both must count against the same buckets).
 */
export type LimitRule = { points: number; durationSeconds: number; blockSeconds?: number };
export type LimitResult = { allowed: true; remaining: number } | { allowed: false; retryAfterSeconds: number };

export type Limiter = {
  readonly name: string;
  /** Charges `cost` points to `key`; never throws for a refusal. */
  consume(key: string, cost?: number): Promise<LimitResult>;
  /** Charges and throws AppError('rate_limited', …) with Retry-After when refused. */
  enforce(key: string, what: string, cost?: number): Promise<void>;
  /** Points left without charging (null when the key has no record). */
  peek(key: string): Promise<number | null>;
  /** Forgets a key (e.g. failed sign-ins after a success). */
  reset(key: string): Promise<void>;
  /** Gives back points charged to `key` (a request that turned out not to count). */
  reward(key: string, points?: number): Promise<void>;
};

const KEY = Symbol.for('svc.limiters');
type Registry = Map<string, Limiter>;

function registry(): Registry {
  const g = globalThis as { [KEY]?: Registry };
  g[KEY] ??= new Map();
  return g[KEY]!;
}

function build(name: string, rule: LimitRule): RateLimiterAbstract {
  const base = { keyPrefix: `svc-limit:${name}`, points: rule.points, duration: rule.durationSeconds, blockDuration: rule.blockSeconds ?? 0 };
  const memory = new RateLimiterMemory(base);
  const redis = getRedis();
  if (!redis) return memory;
  return new RateLimiterRedis({ ...base, keyPrefix: redisKey('limit', name), storeClient: redis, insuranceLimiter: new RateLimiterMemory(base), rejectIfRedisNotReady: false });
}

/** Counts refusals per limiter name (the metrics endpoint reads it; on globalThis like the limiters). */
export const refusalCounts: Map<string, number> = ((globalThis as { [k: symbol]: Map<string, number> })[Symbol.for('svc.limit-refusals')] ??= new Map());

/** The limiter called `name` with `rule` (the first caller's rule wins for a name). */
export function getLimiter(name: string, rule: LimitRule): Limiter {
  const reg = registry();
  const existing = reg.get(name);
  if (existing) return existing;
  const impl = build(name, rule);
  const limiter: Limiter = {
    name,
    async consume(key, cost = 1) {
      try {
        const r = await impl.consume(key, cost);
        return { allowed: true, remaining: r.remainingPoints };
      } catch (e) {
        if (e instanceof RateLimiterRes) {
          refusalCounts.set(name, (refusalCounts.get(name) ?? 0) + 1);
          return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(e.msBeforeNext / 1000)) };
        }
        throw e;
      }
    },
    async enforce(key, what, cost = 1) {
      const r = await limiter.consume(key, cost);
      if (!r.allowed) {
        throw new AppError('rate_limited', `Too many ${what}; retry in ${r.retryAfterSeconds} s.`, { headers: { 'Retry-After': String(r.retryAfterSeconds) } });
      }
    },
    async peek(key) {
      const r = await impl.get(key);
      return r ? r.remainingPoints : null;
    },
    async reset(key) {
      await impl.delete(key);
    },
    async reward(key, points = 1) {
      await impl.reward(key, points);
    },
  };
  reg.set(name, limiter);
  return limiter;
}

/** Drops every limiter (tests that change REDIS_URL between servers in one process). */
export function resetLimiters(): void {
  registry().clear();
  refusalCounts.clear();
}
