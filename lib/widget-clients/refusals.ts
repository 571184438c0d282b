import { getDb } from '../../db/client';
import { addRefusals, listRefusals, ORIGINS_PER_CLIENT, OTHER_ORIGINS, pruneRefusals, type RefusalBatchItem } from '../../db/queries/refusals';
import { getWidgetClientForAuth } from '../../db/queries/widget-clients';
import { hostAllowed, originHost } from '../auth/domains';
import { getLimiter } from '../limits/limiter';
import { addressLimitKey } from '../net/client-address';
import { processSingleton } from '../core/process';

export type { RefusalRow } from '../../db/queries/refusals';

/**
 * "Why does my widget not appear": refused token requests and socket handshakes, counted per
 * client, origin, stage and reason. Counted in memory and written in one statement every 15 s
 * (like sightings), so a flood of refused attempts costs no write per attempt. The pending
 * counts are per process, kept on globalThis because server.ts (sockets) and Next's bundle
 * (the token route, the /widget page) hold separate copies of this module.
 *
 * A refusal is counted against a client only when its token's signature verified or its Origin
 * is one of the client's registered domains: anyone can name a client id, so an unproven claim
 * would let a stranger write into that account's list. Recording is rate-limited per address,
 * and each client holds a bounded share of the pending counts, so no flood hides another
 * client's refusals.
 */
export type RefusalStage = RefusalBatchItem['stage'];
type Pending = { items: Map<string, RefusalBatchItem>; perClient: Map<string, number>; timer?: NodeJS.Timeout; lastPrune: number };

/** Distinct pending rows at most, in all and per client (beyond: folded under OTHER_ORIGINS, still counted). */
const MAX_PENDING = 10_000;
const PENDING_PER_CLIENT = ORIGINS_PER_CLIENT;
/** Refused attempts recorded per client address (IPv6: its /64) a minute; more are not recorded. */
export const REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE = 60;
const FLUSH_MS = 15_000;
export const REFUSAL_DAYS = 30;

function pending(): Pending {
  return processSingleton('svc.widgetRefusals', (): Pending => ({ items: new Map(), perClient: new Map(), lastPrune: 0 }));
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export type RefusalNote = {
  clientId: string;
  /** True when the client id comes from a token whose signature verified. */
  verified: boolean;
  /** The client's registered domains when the caller already has them (else read when needed). */
  domains?: readonly string[];
  address: string;
  origin: string | null | undefined;
  stage: RefusalStage;
  reason: string;
  detail: string;
};

async function originRegistered(r: RefusalNote): Promise<boolean> {
  const host = originHost(r.origin);
  if (!host) return false;
  const domains = r.domains ?? (await getWidgetClientForAuth(await getDb(), r.clientId))?.domains;
  return domains !== undefined && hostAllowed(host, domains);
}

/** Counts one refused attempt when it may be attributed (see above); never throws. */
export async function noteRefusal(r: RefusalNote): Promise<void> {
  try {
    if (!/^wc_[0-9A-Za-z]{12,64}$/.test(r.clientId)) return;
    const limiter = getLimiter('widget-refusals-address', { points: REFUSALS_RECORDED_PER_ADDRESS_PER_MINUTE, durationSeconds: 60 });
    if (!(await limiter.consume(addressLimitKey(r.address))).allowed) return;
    if (!r.verified && !(await originRegistered(r))) return;
    addPending(r);
  } catch (e) {
    console.error('could not count a widget refusal:', (e as Error).message);
  }
}

function addPending(r: RefusalNote) {
  const p = pending();
  let origin = clip(r.origin ?? '', 200);
  const keyOf = () => JSON.stringify([r.clientId, origin, r.stage, r.reason]);
  const now = new Date();
  let current = p.items.get(keyOf());
  if (!current && ((p.perClient.get(r.clientId) ?? 0) >= PENDING_PER_CLIENT || p.items.size >= MAX_PENDING)) {
    origin = OTHER_ORIGINS;
    current = p.items.get(keyOf());
    if (!current && p.items.size >= MAX_PENDING + 1000) return; // the folded rows' own bound
  }
  if (current) {
    current.count++;
    current.lastSeen = now;
    current.detail = clip(r.detail, 300);
  } else {
    p.items.set(keyOf(), {
      clientId: r.clientId,
      origin,
      stage: r.stage,
      reason: clip(r.reason, 80),
      detail: clip(r.detail, 300),
      count: 1,
      firstSeen: now,
      lastSeen: now,
    });
    p.perClient.set(r.clientId, (p.perClient.get(r.clientId) ?? 0) + 1);
  }
  if (!p.timer) {
    p.timer = setTimeout(() => {
      void flushRefusals();
    }, FLUSH_MS);
    p.timer.unref();
  }
}

export async function flushRefusals() {
  const p = pending();
  if (p.timer) {
    clearTimeout(p.timer);
    p.timer = undefined;
  }
  const batch = [...p.items.values()];
  p.items.clear();
  p.perClient.clear();
  try {
    const db = await getDb();
    if (batch.length) await addRefusals(db, batch);
    if (Date.now() - p.lastPrune > 3600_000) {
      p.lastPrune = Date.now();
      await pruneRefusals(db, REFUSAL_DAYS);
    }
  } catch (e) {
    console.error('could not record widget refusals:', (e as Error).message);
  }
}

export async function recentRefusals(accountId: number, days = REFUSAL_DAYS) {
  await flushRefusals();
  return listRefusals(await getDb(), accountId, days);
}

/** The client id a widget token names, unverified (a refused token is often expired or forged). */
function claimedClientId(token: unknown): string | null {
  if (typeof token !== 'string' || token.length > 4096) return null;
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { cid?: unknown };
    return typeof payload.cid === 'string' ? payload.cid : null;
  } catch {
    return null;
  }
}

type Handshake = { headers: { origin?: string }; auth: Record<string, unknown> };

/**
 * Wraps a socket.io middleware's `next`: a refusal (next(err)) is counted with the refusal's own
 * message; the reason is the message's prefix ("domain not allowed", "token expired", …), the
 * stable part of the protocol's connect_error. The middleware calls `verified(clientId)` once the
 * token's signature checked out; before that, the client the token names counts only when the
 * Origin is one of its registered domains.
 */
export function recordingRefusals<E extends Error>(handshake: Handshake, address: string, next: (err?: E) => void) {
  let verifiedClient: string | null = null;
  return {
    verified(clientId: string) {
      verifiedClient = clientId;
    },
    next: (err?: E) => {
      if (err) {
        const clientId = verifiedClient ?? claimedClientId(handshake.auth?.token);
        if (clientId) {
          void noteRefusal({
            clientId,
            verified: verifiedClient !== null,
            address,
            origin: handshake.headers.origin,
            stage: 'socket',
            reason: err.message.split(':')[0]!,
            detail: err.message,
          });
        }
      }
      next(err);
    },
  };
}
