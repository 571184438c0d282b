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
type Holder = { commands?: Redis; extra: Redis[]; later: Array<(redis: Redis) => unknown>; laterTimer?: NodeJS.Timeout };
const KEY = Symbol.for('svc.redis');

function holder(): Holder {
  const g = globalThis as { [KEY]?: Holder };
  g[KEY] ??= { extra: [], later: [] };
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
  if (!offlineQueue) defineIntoPendingPipelines(client);
  return client;
}

/**
 * ioredis (redis/ioredis#1931): an auto-pipeline copies the connection's custom commands when it
 * is created, so a command defined later in the same tick is missing from it (rate-limiter-flexible
 * defines `rlflxIncr` when a limiter is built; svc's scripts are defined on first use). Calling it
 * then queues a callback without a command; the pipeline's completion throws ("results[i] is not
 * iterable") before it starts the next pipeline, and every later command on the connection waits
 * for ever (seen in bench:chat at 450 q/s: an instance stopped answering). Here a definition also
 * reaches the pipelines still pending, as the pipeline's constructor would have copied it.
 * tests/multi/redis-pipeline.test.ts reproduces the hang against a real Redis.
 */
function defineIntoPendingPipelines(client: Redis): void {
  const define = client.defineCommand.bind(client);
  const internals = client as unknown as Record<string, unknown> & { _autoPipelines?: Map<string, Record<string, unknown>> };
  client.defineCommand = (name, definition) => {
    define(name, definition);
    for (const pipeline of internals._autoPipelines?.values() ?? []) {
      pipeline[name] = internals[name];
      pipeline[`${name}Buffer`] = internals[`${name}Buffer`];
    }
  };
}

/** The shared command connection (fails fast while Redis is away). Null without REDIS_URL. */
export function getRedis(): Redis | null {
  if (!isRedisConfigured()) return null;
  const h = holder();
  h.commands ??= open('commands', false);
  return h.commands;
}

/**
 * How long a fire-and-forget command may wait for others (sendLater). Each write to Redis costs a
 * syscall that also wakes redis-server, and its reply a wake-up of this process: on this machine
 * ~50 µs each, the largest part of what Redis adds to an answer (BENCHMARKS.md, run 8). At a
 * hundred answers a second an instance's publications arrive a few ms apart, one write each.
 */
export const SEND_LATER_MS = 5;

/**
 * Sends a fire-and-forget command on the command connection within SEND_LATER_MS, in one write
 * with every other command queued meanwhile, in the order queued. For traffic whose only readers
 * are other instances (cross-instance chat events, the live buffer): they see it a few ms later,
 * this process's own sockets are served at once. Failures are the callback's to ignore.
 */
export function sendLater(command: (redis: Redis) => unknown): void {
  const h = holder();
  h.later.push(command);
  h.laterTimer ??= setTimeout(flushLater, SEND_LATER_MS);
}

function flushLater(): void {
  const h = holder();
  clearTimeout(h.laterTimer);
  h.laterTimer = undefined;
  const queued = h.later.splice(0);
  const redis = getRedis();
  if (!redis) return;
  // Issued in one turn: the connection's auto-pipelining sends them in one write.
  for (const command of queued) {
    try { command(redis); } catch { /* Redis away: the command's own fallback applies */ }
  }
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
  flushLater();
  const h = holder();
  const all = [h.commands, ...h.extra].filter((c): c is Redis => Boolean(c));
  h.commands = undefined;
  h.extra = [];
  await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())));
}
