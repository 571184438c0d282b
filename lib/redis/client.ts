import { Redis } from 'ioredis';
import { getEnv } from '../env';

/**
 * The process's Redis connections (CONTRACTS §9), only when REDIS_URL is set. Shared through
 * globalThis because server.ts and Next's bundles hold separate copies of this module.
 *
 * `commands` never queues while Redis is away (enableOfflineQueue: false): a request path fails
 * fast instead of hanging, and callers fall back (the limiter's insurance, local delivery). It
 * auto-pipelines, and socket.io's adapter publishes through it too (lib/chat/adapter.ts).
 */
type Holder = { commands?: Redis; extra: Redis[] };
const KEY = Symbol.for('svc.redis');

function holder(): Holder {
  const g = globalThis as { [KEY]?: Holder };
  g[KEY] ??= { extra: [] };
  return g[KEY]!;
}

export function isRedisConfigured(): boolean {
  return Boolean(getEnv().REDIS_URL);
}

/** Key prefix of this deployment (REDIS_PREFIX); tests give each run its own. */
export function redisKey(...parts: string[]): string {
  return `${getEnv().REDIS_PREFIX}${parts.join(':')}`;
}

function open(name: string, offlineQueue: boolean): Redis {
  const url = getEnv().REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set');
  const client = new Redis(url, {
    connectionName: `svc-${name}`,
    enableOfflineQueue: offlineQueue,
    maxRetriesPerRequest: offlineQueue ? null : 1,
    retryStrategy: (times) => Math.min(200 * times, 2000),
    lazyConnect: false,
    // Commands issued in one turn of the event loop leave in one write (and their replies come
    // back in one read): a delta's live-buffer append and its SPUBLISH, and the commands of
    // concurrent answers. Measured in BENCHMARKS.md: each write to Redis costs a syscall and a
    // wake-up. Without the offline queue, a command while Redis is away still fails at once
    // (checked with ioredis 6: custom commands too, before and after ready; see DECISIONS).
    enableAutoPipelining: !offlineQueue,
  });
  // Errors while Redis is away are expected; the reconnect loop brings it back.
  client.on('error', () => {});
  return client;
}

/** The shared command connection (fails fast while Redis is away). Null without REDIS_URL. */
export function getRedis(): Redis | null {
  if (!isRedisConfigured()) return null;
  const h = holder();
  h.commands ??= open('commands', false);
  return h.commands;
}

/** A dedicated connection (pub/sub subscribers, blocking reads, adapters). Closed by closeRedis(). */
export function openRedisConnection(name: string, opts: { offlineQueue?: boolean } = {}): Redis {
  const c = open(name, opts.offlineQueue ?? true);
  holder().extra.push(c);
  return c;
}

/**
 * Resolves true once `client` is connected, false after `ms` (Redis away). For one-shot callers
 * such as a CLI command, whose fresh connection is still connecting when it publishes.
 */
export function whenReady(client: Redis, ms: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => { clearTimeout(timer); client.off('ready', onReady); resolve(ok); };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    client.once('ready', onReady);
  });
}

export async function closeRedis(): Promise<void> {
  const h = holder();
  const all = [h.commands, ...h.extra].filter((c): c is Redis => Boolean(c));
  h.commands = undefined;
  h.extra = [];
  await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())));
}
