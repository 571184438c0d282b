import { createShardedAdapter } from '@socket.io/redis-adapter';
import type { Server } from 'socket.io';
import { Adapter, MessageType, type BroadcastOptions } from 'socket.io-adapter';
import { closeRedis, getRedis, isRedisConfigured, openRedisConnection, publishLater, redisKey } from '../redis/client';

/**
 * With REDIS_URL, socket.io's sharded Redis adapter (Redis ≥ 7 sharded pub/sub) carries room
 * broadcasts to the other instances (docs/contracts.md §9); without it, the default in-memory adapter
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
  // The shared command connection (fails fast, one write per turn): a delta's SPUBLISH and its
  // live-buffer append (lib/chat/live.ts) leave in one write and one script call.
  const publisher = getRedis()!;
  const subscriber = openRedisConnection('sio-subscribe', { offlineQueue: true });
  const sharded = createShardedAdapter(publisher, subscriber, {
    channelPrefix: redisKey('sio'),
    subscriptionMode: 'dynamic',
  });
  // socket.io constructs the adapter with `new`; a factory that returns an object serves.
  io.adapter(function svcChatAdapter(nsp: unknown) {
    return withLocalFirst(sharded(nsp) as unknown as ClusterInternals);
  } as unknown as Parameters<Server['adapter']>[0]);
}

/** The parts of socket.io-adapter's ClusterAdapter (and the sharded adapter) this file relies on. */
type ClusterInternals = Adapter & {
  uid: string;
  publish(message: { type: MessageType; data: unknown }): void;
  doPublish(message: { type: MessageType; data: unknown }): Promise<string>;
  computeChannel(message: { type: MessageType; data: unknown }): string;
  encode(message: { type: MessageType; data: unknown }): string | Buffer;
  onRawMessage(raw: Buffer, channel: Buffer | string): void;
};

/**
 * Three changes to the sharded adapter's per-event work, measured in BENCHMARKS.md (run 8):
 * - Local sockets get an event at once. ClusterAdapter.broadcast awaits the SPUBLISH reply
 *   before it delivers locally, so every event of the sender's own visitor waited a Redis round
 *   trip (and, under load, the event-loop turns until that reply was read). The publication goes
 *   out within a few ms (publishLater), in one write and one script call with the others of that
 *   moment, in order on one connection, so other instances see the same order.
 * - The instance's own publications come back on its room subscriptions (sharded pub/sub has no
 *   "no echo"); they are recognised by the sender uid at the end of the message and dropped
 *   without parsing. JSON cannot hold that byte sequence inside a string value (its quotes would be
 *   escaped), so only the adapter's own field matches.
 * - Broadcasts are JSON-encoded without the recursive binary scan: svc's chat events are plain
 *   JSON (lib/chat/protocol.ts) and never carry a Buffer. Other message types keep the library's
 *   encoding.
 */
function withLocalFirst(adapter: ClusterInternals): ClusterInternals {
  const localBroadcast = Adapter.prototype.broadcast;
  adapter.broadcast = function broadcast(packet, opts: BroadcastOptions) {
    localBroadcast.call(adapter, packet, opts);
    if (!opts.flags?.local) {
      adapter.publish({ type: MessageType.BROADCAST, data: { packet, opts: { rooms: [...opts.rooms], except: [...(opts.except ?? [])], flags: opts.flags } } });
    }
  };

  // Broadcasts are queued (publishLater): they leave within SEND_LATER_MS, in one write and one
  // script call with the rest of that moment's traffic. Other messages keep the library's path.
  const libraryEncode = adapter.encode.bind(adapter);
  adapter.encode = (message) => (message.type === MessageType.BROADCAST ? JSON.stringify(message) : libraryEncode(message));

  const libraryDoPublish = adapter.doPublish.bind(adapter);
  adapter.doPublish = (message) => {
    if (message.type !== MessageType.BROADCAST) return libraryDoPublish(message);
    publishLater(adapter.computeChannel(message), adapter.encode(message) as string);
    return Promise.resolve('');
  };

  const ownSuffix = Buffer.from(`"uid":"${adapter.uid}","nsp":${JSON.stringify(adapter.nsp.name)}}`);
  const libraryOnRaw = adapter.onRawMessage.bind(adapter);
  adapter.onRawMessage = (raw, channel) => {
    if (raw.length > ownSuffix.length && raw[0] === 0x7b && raw.subarray(raw.length - ownSuffix.length).equals(ownSuffix)) return;
    libraryOnRaw(raw, channel);
  };
  return adapter;
}

/** Closes the adapter's connections (and the rest of this process's Redis connections). */
export async function closeChatAdapter(): Promise<void> {
  if (isRedisConfigured()) await closeRedis();
}
