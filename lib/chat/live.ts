import type { Namespace } from 'socket.io';
import { appendLater, getRedis, isRedisConfigured, redisKey, sendLaterThisTurn } from '../redis/client';
import type { ServerEvent } from './protocol';
import { processSingleton } from '../core/process';
import { legacyEvent, legacyRoomOf } from './legacy';

/**
 * Delivery of conversation events. Every event goes to the socket.io room of its conversation;
 * with REDIS_URL the sharded Redis adapter (lib/chat/adapter.ts) carries it to the instances with a socket in that room.
 *
 * Stored events (questions, finished answers, feedback) are read back from the database on
 * resume. Deltas are not stored, so the live ones are kept where every instance can read them:
 * a per-conversation sorted set in Redis (score = seq, the newest LIVE_KEEP, expiring after
 * LIVE_TTL_SECONDS of silence), and always also in this process's memory, so resume works within
 * an instance while Redis is away and on a single instance without Redis.
 */
const LIVE_KEEP = 2000;
const LIVE_TTL_SECONDS = 600;

type State = { nsp?: Namespace; local: Map<string, { events: ServerEvent[]; touched: number }> };
function state(): State {
  return processSingleton('svc.chatLive', (): State => ({ local: new Map() }));
}

export function roomOf(conversationId: string): string {
  return `conv:${conversationId}`;
}

export function setChatNamespace(nsp: Namespace | undefined): void {
  state().nsp = nsp;
}

function liveKey(conversationId: string): string {
  return redisKey('chat', 'live', conversationId);
}

/**
 * Sends an event to every subscriber of its conversation, on every instance. A handoff event goes
 * first, translated, to the conversation's pre-2.1 widgets (lib/chat/legacy.ts): they take it and
 * then drop the original, which arrives with the same seq.
 */
export function publish(event: ServerEvent): void {
  if (event.type === 'answer.delta') remember(event); // not agent.typing: a resume never replays an old "is typing"
  const nsp = state().nsp;
  const legacy = legacyEvent(event);
  if (legacy) nsp?.to(legacyRoomOf(event.conversation_id)).emit('event', legacy);
  if (PERSON_PACED.has(event.type)) sendLaterThisTurn();
  nsp?.to(roomOf(event.conversation_id)).emit('event', event);
}

/** The handoff's events: a person waits on each, and they come a few a second, not as a stream. */
const PERSON_PACED = new Set<ServerEvent['type']>([
  'handoff.waiting',
  'handoff.away',
  'agent.joined',
  'agent.message',
  'agent.left',
  'agent.typing',
  'visitor.message',
  'conversation.resolved',
  'status',
]);

function remember(event: ServerEvent): void {
  const s = state();
  let entry = s.local.get(event.conversation_id);
  if (!entry) {
    entry = { events: [], touched: 0 };
    s.local.set(event.conversation_id, entry);
  }
  entry.events.push(event);
  entry.touched = Date.now();
  if (entry.events.length > LIVE_KEEP) entry.events.splice(0, entry.events.length - LIVE_KEEP);
  if (!isRedisConfigured()) return;
  // With the event's SPUBLISH, in one write and one script call (lib/redis/client.ts): other
  // instances read both. Redis away: this instance's memory still serves resumes.
  appendLater(liveKey(event.conversation_id), event.seq, JSON.stringify(event), LIVE_KEEP, LIVE_TTL_SECONDS);
}

/** Live (unstored) events after `afterSeq`, oldest first, at most `limit`. */
export async function readLive(conversationId: string, afterSeq: number, limit: number): Promise<ServerEvent[]> {
  const bySeq = new Map<number, ServerEvent>();
  for (const e of state().local.get(conversationId)?.events ?? []) if (e.seq > afterSeq) bySeq.set(e.seq, e);
  const redis = getRedis();
  if (redis) {
    try {
      const raw = await redis.zrangebyscore(liveKey(conversationId), `(${afterSeq}`, '+inf', 'LIMIT', 0, limit);
      for (const r of raw) {
        const e = JSON.parse(r) as ServerEvent;
        bySeq.set(e.seq, e);
      }
    } catch {
      /* Redis away: what this instance saw itself */
    }
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq).slice(0, limit);
}

/** Forgets this process's copies of conversations silent for a while. */
export function sweepLive(maxIdleMs = LIVE_TTL_SECONDS * 1000): void {
  const now = Date.now();
  for (const [id, entry] of state().local) if (now - entry.touched > maxIdleMs) state().local.delete(id);
}
