import { createShardedAdapter } from '@socket.io/redis-adapter';
import type { Server } from 'socket.io';
import { closeRedis, getRedis, isRedisConfigured, openRedisConnection, redisKey } from '../redis/client';

/**
 * With REDIS_URL, socket.io's sharded Redis adapter (Redis ≥ 7 sharded pub/sub) carries room
 * broadcasts to the other instances (CONTRACTS §9); without it, the default in-memory adapter
 * serves the single process.
 *
 * Subscriptions are dynamic: an instance subscribes to a conversation's channel only while one of
 * its sockets is in that room, so an event reaches only the instances that have a subscriber for it
 * (usually none but the sender). The Redis Streams adapter it replaces had every instance read and
 * decode every event (~8 XREAD replies per answer with two instances, measured in BENCHMARKS.md);
 * its connection-state recovery was never used (the protocol resumes by seq, lib/chat/live.ts).
 *
 * The publishing connection (the process's command connection) fails fast while Redis is away (no offline queue): the adapter then
 * skips the cross-instance copy and still delivers locally at once, so chat keeps working within
 * each instance. The subscribing connection queues and re-subscribes by itself when Redis returns.
 */
export function attachChatAdapter(io: Server): void {
  if (!isRedisConfigured()) return;
  // The shared command connection (fails fast, auto-pipelined): a delta's SPUBLISH and its
  // live-buffer append (lib/chat/live.ts) leave in one write.
  const publisher = getRedis()!;
  const subscriber = openRedisConnection('sio-subscribe', { offlineQueue: true });
  io.adapter(createShardedAdapter(publisher, subscriber, {
    channelPrefix: redisKey('sio'),
    subscriptionMode: 'dynamic',
  }));
}

/** Closes the adapter's connections (and the rest of this process's Redis connections). */
export async function closeChatAdapter(): Promise<void> {
  if (isRedisConfigured()) await closeRedis();
}
