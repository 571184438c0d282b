import { Redis } from 'ioredis';
import { getEnv } from '../env';
import { processSingleton } from '../core/process';

/**
 * The process's Redis connections (docs/contracts.md §9), only when REDIS_URL is set. Shared through
 * globalThis because server.ts and Next's bundles hold separate copies of this module.
 *
 * `commands` never queues while Redis is away (enableOfflineQueue: false): a request path fails
 * fast instead of hanging, and callers fall back (the limiter's insurance, local delivery). What
 * it is asked in one turn of the event loop leaves in one write (writeOncePerTurn), and socket.io's
 * adapter publishes through it too (lib/chat/adapter.ts).
 */
type Holder = { commands?: Redis; extra: Redis[]; later: LaterOp[]; laterTimer?: NodeJS.Timeout; laterThisTurn?: NodeJS.Immediate };

function holder(): Holder {
  return processSingleton('svc.redis', (): Holder => ({ extra: [], later: [] }));
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
  });
  // Errors while Redis is away are expected; the reconnect loop brings it back.
  client.on('error', () => {});
  if (!offlineQueue) writeOncePerTurn(client);
  return client;
}

/**
 * Commands issued in one turn of the event loop leave in one write, and so does the traffic that
 * publishLater and appendLater queued meanwhile: the first command of a turn corks the socket, and at the end of the
 * turn (setImmediate) the queue is issued into the same cork and the socket uncorked, one
 * `writev`. Measured in BENCHMARKS.md (run 9): on this machine a write to Redis costs ~100 µs of
 * the writer's CPU (the syscall wakes redis-server), the largest part of what Redis adds to an
 * answer; ioredis's own auto-pipelining did the same grouping through a Pipeline object per turn
 * (about a fifth of the remaining overhead) and had ioredis#1931 (a script defined while a
 * pipeline was pending hung the connection). Replies are matched in order as for any command.
 * Without the offline queue a command while Redis is away is refused at once, as before.
 */
function writeOncePerTurn(client: Redis): void {
  const send = client.sendCommand.bind(client);
  let corked: { uncork(): void } | null = null;
  client.sendCommand = ((command, stream) => {
    // The connection's socket (a net.Socket, or a TLS socket for rediss://).
    const socket = client.stream as unknown as { writable?: boolean; cork(): void; uncork(): void } | undefined;
    if (!corked && !stream && client.status === 'ready' && socket?.writable) {
      socket.cork();
      corked = socket;
      setImmediate(() => {
        flushLater(client); // queued fire-and-forget traffic rides along, still corked
        const c = corked;
        corked = null;
        c?.uncork();
      });
    }
    return send(command, stream);
  }) as Redis['sendCommand'];
}

/** The shared command connection (fails fast while Redis is away). Null without REDIS_URL. */
export function getRedis(): Redis | null {
  if (!isRedisConfigured()) return null;
  const h = holder();
  h.commands ??= open('commands', false);
  return h.commands;
}

/**
 * How long fire-and-forget traffic may wait for a write (publishLater, appendLater). Each write to
 * Redis costs a syscall that also wakes redis-server, and its reply a wake-up of this process: on
 * this machine ~100 µs of the writer's CPU, the largest part of what Redis adds to an answer
 * (BENCHMARKS.md, runs 8 and 9). Queued traffic leaves with the next command this process sends
 * anyway (under load, the next ask's rate-limit check, a few ms later), or after SEND_LATER_MS when
 * none comes.
 */
export const SEND_LATER_MS = 20;

/** The most operations one batch script carries (a script blocks redis-server while it runs). */
export const LATER_BATCH = 256;

/** Fire-and-forget traffic whose only readers are other instances, in the order queued. */
type LaterOp = { op: 'p'; channel: string; payload: string } | { op: 'z'; key: string; score: number; member: string; keep: number; ttlSeconds: number };

/**
 * Queued traffic leaves as one script call per flush, whatever its length (BENCHMARKS.md run 10):
 * one command object, one reply to parse and one script run in redis-server, where it was one
 * command each (an answer's publications and live-buffer appends: ~6). What other instances receive
 * is unchanged, so instances of the previous release read it during a rolling deploy: the same
 * SPUBLISH messages on the same shard channels, in the same order, and the same sorted sets.
 * ARGV is a sequence of operations: `p channel payload` publishes, `z score member keep ttl` adds to
 * the next key of KEYS, keeps its newest `keep` members and sets its expiry. One Redis server
 * (or a primary with replicas); not Redis Cluster, where one script's keys and shard channels
 * must share a slot (docs/DECISIONS.md).
 */
const LATER_LUA = `
local k, i, n = 1, 1, #ARGV
while i <= n do
  if ARGV[i] == 'p' then
    redis.call('spublish', ARGV[i + 1], ARGV[i + 2])
    i = i + 3
  else
    local key = KEYS[k]
    k = k + 1
    redis.call('zadd', key, ARGV[i + 1], ARGV[i + 2])
    redis.call('zremrangebyrank', key, 0, -tonumber(ARGV[i + 3]) - 1)
    redis.call('expire', key, ARGV[i + 4])
    i = i + 5
  end
end
return 0
`;
type LaterRedis = Redis & { svcLater(numberOfKeys: number, ...keysThenArgs: Array<string | number>): Promise<number> };
const laterDefined = new WeakSet<Redis>();

/** Publishes `payload` on the shard channel `channel` (SPUBLISH) within SEND_LATER_MS. */
export function publishLater(channel: string, payload: string): void {
  queueLater({ op: 'p', channel, payload });
}

/**
 * What a person is waiting on (a member's reply, the inbox's changes), queued in this turn, leaves
 * at the end of it instead of after SEND_LATER_MS: those events are a few per second, not an answer's stream,
 * and the 20 ms were most of a reply's way to the visitor (BENCHMARKS.md "Handoff on two instances").
 */
export function sendLaterThisTurn(): void {
  const h = holder();
  if (h.laterThisTurn) return;
  h.laterThisTurn = setImmediate(() => {
    h.laterThisTurn = undefined;
    flushLater();
  });
}

/**
 * Adds `member` with `score` to the sorted set `key`, keeps its newest `keep` members and (re)sets
 * its expiry to `ttlSeconds`, atomically, within SEND_LATER_MS.
 */
export function appendLater(key: string, score: number, member: string, keep: number, ttlSeconds: number): void {
  queueLater({ op: 'z', key, score, member, keep, ttlSeconds });
}

/**
 * For traffic whose only readers are other instances (cross-instance chat events, the live
 * buffer): they see it a few ms later, this process's own sockets are served at once. It leaves in
 * one write with the next command the process sends (writeOncePerTurn), in the order queued. While
 * Redis is away it is dropped (the callers' fallbacks apply: each instance's own memory).
 */
function queueLater(op: LaterOp): void {
  const h = holder();
  h.later.push(op);
  h.laterTimer ??= setTimeout(flushLater, SEND_LATER_MS);
}

/**
 * Issues what was queued, on the command connection. `only`: just when that connection is
 * `only` (a cork's end-of-turn callback: after closeRedis it must not open a new connection).
 */
function flushLater(only?: Redis): void {
  const h = holder();
  if (h.later.length === 0 || (only && h.commands !== only)) return;
  clearTimeout(h.laterTimer);
  h.laterTimer = undefined;
  const queued = h.later.splice(0);
  const redis = getRedis();
  if (!redis) return;
  if (!laterDefined.has(redis)) {
    redis.defineCommand('svcLater', { lua: LATER_LUA });
    laterDefined.add(redis);
  }
  for (let start = 0; start < queued.length; start += LATER_BATCH) {
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const o of queued.slice(start, start + LATER_BATCH)) {
      if (o.op === 'p') args.push('p', o.channel, o.payload);
      else {
        keys.push(o.key);
        args.push('z', o.score, o.member, o.keep, o.ttlSeconds);
      }
    }
    // Issued in one turn: writeOncePerTurn sends them in one write. Redis away: dropped.
    try {
      (redis as LaterRedis).svcLater(keys.length, ...keys, ...args).catch(() => {});
    } catch {
      /* Redis away: dropped */
    }
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
    const done = (ok: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ok);
    };
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
