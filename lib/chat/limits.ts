import { getEnv } from '../env';
import { consumeInOrder, getLimiter, throwIfRefused } from '../limits/limiter';
import type { Admission } from '../visitor/service';
import type { Ack, ClientRequestName } from './protocol';

/** Open widget sockets of this instance per client address and per widget client (per process by nature). */
export class SocketCounts {
  private counts = new Map<string, number>();
  get(key: string) {
    return this.counts.get(key) ?? 0;
  }
  add(key: string, n: number) {
    const v = this.get(key) + n;
    if (v <= 0) this.counts.delete(key);
    else this.counts.set(key, v);
  }
}

/** The namespace's limits: open sockets per address and per client, requests per 10 s, questions per minute. */
export function socketLimits() {
  const env = getEnv();
  return {
    perAddress: new SocketCounts(),
    perClient: new SocketCounts(),
    // Keyed by visitor, client and address (not by socket): a new socket never gets a fresh budget.
    events: getLimiter('socket-events', { points: env.SOCKET_EVENTS_PER_10S, durationSeconds: 10 }),
    eventsPerAddress: getLimiter('socket-events-address', { points: env.SOCKET_EVENTS_PER_10S * 25, durationSeconds: 10 }),
    asks: {
      visitor: getLimiter('ask-visitor', { points: env.ASKS_PER_MINUTE_PER_VISITOR, durationSeconds: 60 }),
      address: getLimiter('ask-address', { points: env.ASKS_PER_MINUTE_PER_ADDRESS, durationSeconds: 60 }),
      client: getLimiter('ask-client', { points: env.ASKS_PER_MINUTE_PER_CLIENT, durationSeconds: 60 }),
    },
  };
}
export type SocketLimits = ReturnType<typeof socketLimits>;

/** Whose budgets a socket's requests spend. */
export type Spender = { visitorKey: string; address: string; clientId: string };

/**
 * Charges a request to the visitor's and the address's budgets; the refusal's ack when one is
 * spent, else null. `ask` has its own, stricter limits (askAdmissions): charging it here too cost
 * two more Redis round trips per question.
 */
export async function chargeRequest(limits: SocketLimits, name: ClientRequestName, who: Spender): Promise<Ack<object> | null> {
  if (name === 'ask') return null;
  for (const [limiter, key] of [
    [limits.events, who.visitorKey],
    [limits.eventsPerAddress, who.address],
  ] as const) {
    const r = await limiter.consume(key);
    if (!r.allowed) return { ok: false, error: { code: 'rate_limited', message: `Too many messages; wait ${r.retryAfterSeconds} s.` } };
  }
  return null;
}

/** The admission of each ask of one socket (lib/visitor/service.ts Admission). */
export function askAdmissions(limits: SocketLimits, who: Spender): () => Admission {
  // Points the last ask's check left (the fewest over the three limits); null before the first.
  let askRoom: number | null = null;
  return () => {
    // In this order, one Redis round trip: the shared per-address and per-client budgets are
    // charged only when the visitor's own passed, so one visitor's flood never spends them.
    const check = async () => {
      askRoom = 0;
      const r = await consumeInOrder([
        [limits.asks.visitor, who.visitorKey],
        [limits.asks.address, who.address],
        [limits.asks.client, who.clientId],
      ]);
      askRoom = r.allowed ? r.remaining : 0;
      throwIfRefused(r, 'questions');
    };
    // The check overlaps the conversation's reads only while the last one left room for more than
    // one question: a visitor near a limit (or flooding) is refused before anything is read.
    return { check, overlap: askRoom !== null && askRoom > 1 };
  };
}
