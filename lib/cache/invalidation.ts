import type { Redis } from 'ioredis';
import { getRedis, openRedisConnection, redisKey, whenReady } from '../redis/client';
import { processSingleton } from '../core/process';

/**
 * Cache invalidation across instances (docs/contracts.md §9: keys, clients and domains within 1 s).
 * `publishInvalidation(topic, id)` runs this process's listeners at once and, with REDIS_URL,
 * every other instance's through one Redis pub/sub channel. Without Redis it is process-local,
 * which is exact for the single-process deployment.
 *
 * Caches must also bound their own staleness (a TTL of ≤ 1 s, or a re-check) for the minutes
 * Redis is away, because a message published then is lost.
 */
export type InvalidationListener = (id: string) => void;
type State = { listeners: Map<string, Set<InvalidationListener>>; subscriber?: Redis; origin: string };

function state(): State {
  return processSingleton('svc.invalidation', (): State => ({ listeners: new Map(), origin: `${process.pid}-${Math.random().toString(36).slice(2)}` }));
}

function channel(): string {
  return redisKey('invalidate');
}

function runLocal(topic: string, id: string): void {
  for (const fn of state().listeners.get(topic) ?? []) {
    try {
      fn(id);
    } catch (e) {
      console.error(`invalidation listener for ${topic} failed:`, e);
    }
  }
}

function ensureSubscriber(): void {
  const s = state();
  if (s.subscriber || !getRedis()) return;
  const sub = openRedisConnection('invalidation');
  s.subscriber = sub;
  void sub.subscribe(channel()).catch(() => {});
  sub.on('message', (_ch: string, raw: string) => {
    try {
      const m = JSON.parse(raw) as { topic: string; id: string; origin: string };
      if (m.origin !== s.origin) runLocal(m.topic, m.id);
    } catch {
      /* not ours */
    }
  });
}

/** Registers a listener for a topic (e.g. 'api-key'); returns an unsubscribe function. */
export function onInvalidation(topic: string, fn: InvalidationListener): () => void {
  ensureSubscriber();
  const s = state();
  const set = s.listeners.get(topic) ?? new Set();
  set.add(fn);
  s.listeners.set(topic, set);
  return () => set.delete(fn);
}

/** Tells every instance (this one synchronously) that `id` of `topic` changed. Never throws. */
export async function publishInvalidation(topic: string, id: string): Promise<void> {
  runLocal(topic, id);
  const redis = getRedis();
  if (!redis) return;
  // A fresh connection (the CLI's) is still connecting: wait for it briefly rather than drop the
  // message (the command connection does not queue). Redis away: the caches' own TTL bounds it.
  if (!(await whenReady(redis, 2000))) return;
  await redis.publish(channel(), JSON.stringify({ topic, id, origin: state().origin })).catch(() => {});
}
