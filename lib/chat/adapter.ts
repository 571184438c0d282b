import { createAdapter } from '@socket.io/redis-streams-adapter';
import type { Server } from 'socket.io';
import { closeRedis, isRedisConfigured, openRedisConnection, redisKey } from '../redis/client';

/**
 * With REDIS_URL, socket.io's Redis Streams adapter carries room broadcasts to every instance
 * (CONTRACTS §9); without it, the default in-memory adapter serves the single process.
 *
 * The publishing connection fails fast while Redis is away (no offline queue): the adapter then
 * skips the cross-instance copy and still delivers locally at once, so chat keeps working within
 * each instance. The reading connections it duplicates queue instead (a blocking XREAD that
 * failed fast would spin), and resume by themselves when Redis returns.
 */
export function attachChatAdapter(io: Server): void {
  if (!isRedisConfigured()) return;
  const publisher = openRedisConnection('sio-publish', { offlineQueue: false });
  let n = 0;
  (publisher as unknown as { duplicate: () => unknown }).duplicate = () => openRedisConnection(`sio-read-${++n}`, { offlineQueue: true });
  io.adapter(createAdapter(publisher, {
    streamName: redisKey('sio'),
    channelPrefix: redisKey('sio'),
    sessionKeyPrefix: redisKey('sio-session:'),
    maxLen: 10_000,
    blockTimeInMs: 2000,
  }));
}

/** Closes the adapter's connections (and the rest of this process's Redis connections). */
export async function closeChatAdapter(): Promise<void> {
  if (isRedisConfigured()) await closeRedis();
}
