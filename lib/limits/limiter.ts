import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { AppError } from '../core/errors';
import { getRedis, redisKey } from '../redis/client';
import { processSingleton } from '../core/process';

/**
 * Every rate limit of the service, through rate-limiter-flexible. Without REDIS_URL a memory
 * store (one process); with it a Redis store shared by every instance, with an in-memory
 * insurance limiter for the minutes Redis is away (docs/contracts.md §9).
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

/** A limiter and what the ordered check (consumeInOrder) needs of it: its store and its rule. */
type Entry = { limiter: Limiter; impl: RateLimiterAbstract; insurance: RateLimiterMemory | null; rule: LimitRule };
type Registry = Map<string, Limiter>;

function registry(): Registry {
  return processSingleton('svc.limiters', (): Registry => new Map());
}

/**
 * Every limiter handed out, with its store and rule, for consumeInOrder. Apart from the registry:
 * a limiter taken before resetLimiters() keeps working (its holder still charges its own store).
 */
const entries: WeakMap<Limiter, Entry> = processSingleton('svc.limiter-entries', () => new WeakMap<Limiter, Entry>());

function build(name: string, rule: LimitRule): { impl: RateLimiterAbstract; insurance: RateLimiterMemory | null } {
  const base = { keyPrefix: `svc-limit:${name}`, points: rule.points, duration: rule.durationSeconds, blockDuration: rule.blockSeconds ?? 0 };
  const memory = new RateLimiterMemory(base);
  const redis = getRedis();
  if (!redis) return { impl: memory, insurance: null };
  const insurance = new RateLimiterMemory(base);
  return {
    impl: new RateLimiterRedis({ ...base, keyPrefix: redisKey('limit', name), storeClient: redis, insuranceLimiter: insurance, rejectIfRedisNotReady: false }),
    insurance,
  };
}

/** Counts refusals per limiter name (the metrics endpoint reads it; on globalThis like the limiters). */
export const refusalCounts: Map<string, number> = processSingleton('svc.limit-refusals', () => new Map<string, number>());

function refused(name: string, msBeforeNext: number): LimitResult & { limiter: string } {
  refusalCounts.set(name, (refusalCounts.get(name) ?? 0) + 1);
  return { allowed: false, limiter: name, retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) };
}

/** The one rate_limited error: 429 with Retry-After over HTTP, `rate_limited` on a socket. */
export function throwIfRefused(r: LimitResult, what: string): void {
  if (!r.allowed) {
    throw new AppError('rate_limited', `Too many ${what}; retry in ${r.retryAfterSeconds} s.`, { headers: { 'Retry-After': String(r.retryAfterSeconds) } });
  }
}

/** The limiter called `name` with `rule` (the first caller's rule wins for a name). */
export function getLimiter(name: string, rule: LimitRule): Limiter {
  const reg = registry();
  const existing = reg.get(name);
  if (existing) return existing;
  const { impl, insurance } = build(name, rule);
  const limiter: Limiter = {
    name,
    async consume(key, cost = 1) {
      try {
        const r = await impl.consume(key, cost);
        return { allowed: true, remaining: r.remainingPoints };
      } catch (e) {
        if (e instanceof RateLimiterRes) return refused(name, e.msBeforeNext);
        throw e;
      }
    },
    async enforce(key, what, cost = 1) {
      throwIfRefused(await limiter.consume(key, cost), what);
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
  entries.set(limiter, { limiter, impl, insurance, rule });
  return limiter;
}

/**
 * The stages of rate-limiter-flexible's fixed window (its Redis script: SET NX EX, INCRBY, PTTL)
 * for each key in turn, stopping at the first refusal: a later key is charged only when every
 * earlier one passed. One round trip for all of them. Returns {0, fewest points left} when all
 * passed, else {1-based stage that refused, its window's milliseconds left}. ARGV: the cost, then
 * duration and points per key. Same keys and values as RateLimiterRedis, so peek/reset/reward of the same
 * limiters (and their own consume) see one count. docs/DECISIONS.md argues the script.
 */
const CONSUME_IN_ORDER_LUA = `
local cost = tonumber(ARGV[1])
local fewest = -1
for i = 1, #KEYS do
  local duration = tonumber(ARGV[2 * i])
  redis.call('set', KEYS[i], 0, 'EX', duration, 'NX')
  local consumed = redis.call('incrby', KEYS[i], cost)
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 then
    redis.call('expire', KEYS[i], duration)
    ttl = 1000 * duration
  end
  local points = tonumber(ARGV[2 * i + 1])
  if consumed > points then return {i, ttl} end
  if fewest < 0 or points - consumed < fewest then fewest = points - consumed end
end
return {0, fewest}
`;
type OrderedRedis = Redis & { svcConsumeInOrder(...args: Array<string | number>): Promise<[number, number]> };
const definedOn = new WeakSet<Redis>();

/**
 * Charges one point to each `[limiter, key]` in order and stops at the first refusal, so a
 * refused earlier stage never spends a later one (a visitor's flood never spends the shared
 * per-address and per-client budgets). With Redis all stages take one round trip (a Lua script
 * over the limiters' own keys); while Redis is away the limiters' in-memory insurance, in the
 * same order; without Redis their memory stores. Limiters with a block duration are not
 * supported here (they would need the library's blocking logic).
 */
export async function consumeInOrder(stages: ReadonlyArray<readonly [Limiter, string]>): Promise<LimitResult & { limiter?: string }> {
  const staged = stages.map(([l, key]) => {
    const e = entries.get(l);
    if (!e) throw new Error(`limiter ${l.name} was not made by getLimiter`);
    if (e.rule.blockSeconds) throw new Error(`limiter ${l.name} blocks; consumeInOrder does not support blocking`);
    return { e, key };
  });
  const redis = getRedis();
  if (redis && staged.every(({ e }) => e.impl instanceof RateLimiterRedis)) {
    if (!definedOn.has(redis)) {
      redis.defineCommand('svcConsumeInOrder', { lua: CONSUME_IN_ORDER_LUA });
      definedOn.add(redis);
    }
    const keys = staged.map(({ e, key }) => e.impl.getKey(key));
    const args = staged.flatMap(({ e }) => [e.rule.durationSeconds, e.rule.points]);
    try {
      const [stage, value] = await (redis as OrderedRedis).svcConsumeInOrder(keys.length, ...keys, 1, ...args);
      if (stage === 0) return { allowed: true, remaining: value };
      return refused(staged[stage - 1]!.e.limiter.name, value);
    } catch {
      // Redis away (the connection fails fast): the insurance limiters below, in the same order.
    }
  }
  let remaining = Infinity;
  for (const { e, key } of staged) {
    const store = e.insurance ?? e.impl;
    try {
      remaining = Math.min(remaining, (await store.consume(key, 1)).remainingPoints);
    } catch (err) {
      if (err instanceof RateLimiterRes) return refused(e.limiter.name, err.msBeforeNext);
      throw err;
    }
  }
  return { allowed: true, remaining };
}

/** Drops every limiter (tests that change REDIS_URL between servers in one process). */
export function resetLimiters(): void {
  registry().clear();
  refusalCounts.clear();
}
