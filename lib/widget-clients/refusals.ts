import { getDb } from '../../db/client';
import { addRefusals, listRefusals, pruneRefusals, type RefusalBatchItem } from '../../db/queries/refusals';

export type { RefusalRow } from '../../db/queries/refusals';

/**
 * "Why does my widget not appear": refused token requests and socket handshakes, counted per
 * client, origin, stage and reason. Counted in memory and written in one statement every 15 s
 * (like sightings), so a flood of refused attempts costs no write per attempt. The pending
 * counts are per process, kept on globalThis because server.ts (sockets) and Next's bundle
 * (the token route, the /widget page) hold separate copies of this module.
 */
export type RefusalStage = RefusalBatchItem['stage'];
type Pending = { items: Map<string, RefusalBatchItem>; timer?: NodeJS.Timeout; lastPrune: number };

const KEY = Symbol.for('svc.widgetRefusals');
const MAX_PENDING = 1000;
const FLUSH_MS = 15_000;
export const REFUSAL_DAYS = 30;

function pending(): Pending {
  const g = globalThis as { [KEY]?: Pending };
  g[KEY] ??= { items: new Map(), lastPrune: 0 };
  return g[KEY];
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Counts one refused attempt; never throws, never waits. */
export function noteRefusal(r: { clientId: string; origin: string | null | undefined; stage: RefusalStage; reason: string; detail: string }) {
  if (!/^wc_[0-9A-Za-z]{12,64}$/.test(r.clientId)) return;
  const p = pending();
  const origin = clip(r.origin ?? '', 200);
  const key = JSON.stringify([r.clientId, origin, r.stage, r.reason]);
  const now = new Date();
  const current = p.items.get(key);
  if (current) { current.count++; current.lastSeen = now; current.detail = clip(r.detail, 300); }
  else if (p.items.size < MAX_PENDING) p.items.set(key, { clientId: r.clientId, origin, stage: r.stage, reason: clip(r.reason, 80), detail: clip(r.detail, 300), count: 1, firstSeen: now, lastSeen: now });
  if (!p.timer) {
    p.timer = setTimeout(() => { void flushRefusals(); }, FLUSH_MS);
    p.timer.unref();
  }
}

export async function flushRefusals() {
  const p = pending();
  if (p.timer) { clearTimeout(p.timer); p.timer = undefined; }
  const batch = [...p.items.values()];
  p.items.clear();
  try {
    const db = await getDb();
    if (batch.length) await addRefusals(db, batch);
    if (Date.now() - p.lastPrune > 3600_000) { p.lastPrune = Date.now(); await pruneRefusals(db, REFUSAL_DAYS); }
  } catch (e) {
    console.error('could not record widget refusals:', (e as Error).message);
  }
}

export async function recentRefusals(accountId: number, days = REFUSAL_DAYS) {
  await flushRefusals();
  return listRefusals(await getDb(), accountId, days);
}

/** The client id a widget token names (read without verifying: a refused token is often expired or forged). */
function tokenClientId(token: unknown): string | null {
  if (typeof token !== 'string' || token.length > 4096) return null;
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { cid?: unknown };
    return typeof payload.cid === 'string' ? payload.cid : null;
  } catch { return null; }
}

type Handshake = { headers: { origin?: string }; auth: Record<string, unknown> };

/**
 * Wraps a socket.io middleware's `next`: a refusal (next(err)) is counted under the client its
 * token names, with the refusal's own message; the reason is the message's prefix
 * ("domain not allowed", "token expired", …), the stable part of the protocol's connect_error.
 */
export function recordingRefusals<E extends Error>(handshake: Handshake, next: (err?: E) => void): (err?: E) => void {
  return (err?: E) => {
    if (err) {
      const clientId = tokenClientId(handshake.auth?.token);
      if (clientId) noteRefusal({ clientId, origin: handshake.headers.origin, stage: 'socket', reason: err.message.split(':')[0]!, detail: err.message });
    }
    next(err);
  };
}
