import { getDb } from '../../db/client';
import { getApiKeyForAuth, recordApiKeysUsed } from '../../db/queries/api-keys';
import { AppError } from '../core/errors';
import type { ApiRequest } from '../api/handler';
import { onInvalidation } from '../cache/invalidation';
import { getEnv } from '../env';
import { bearerToken, parseApiKey, secretMatches, type ParsedKey } from './api-keys';
import { accountFromSessionCookie } from './session';
import { processSingleton } from '../core/process';

/** Who is reading the Customer API. The dashboard's session path yields the same shape. */
export type CustomerPrincipal = { accountId: number; via: 'api_key' | 'session'; keyId?: string };

const unauthorized = (detail: string) => new AppError('unauthorized', detail);

/**
 * Resolves the account of a Customer API request. An API key is read only from the Authorization
 * header; without the header, a dashboard session may stand in for it. Answers without a promise
 * when it can (a key this process read within API_KEY_CACHE_MS), for the direct door's hot path;
 * a refusal may be thrown instead of rejected.
 */
export function customerPrincipalOf(req: ApiRequest): CustomerPrincipal | Promise<CustomerPrincipal> {
  const header = req.headers.get('authorization');
  if (header === null) return sessionPrincipal(req);
  const token = bearerToken(header);
  if (!token) throw unauthorized('The Authorization header must be "Bearer <API key>".');
  const parsed = parseApiKey(token);
  if (!parsed) throw unauthorized('Malformed API key; expected svc_<live|test>_<key id>_<secret>.');
  const deployment = getEnv().SVC_ENV;
  if (parsed.env !== deployment) {
    throw unauthorized(`This is a ${parsed.env} key; this deployment accepts ${deployment} keys only.`);
  }
  const row = findApiKey(parsed.keyId);
  return row instanceof Promise ? row.then((r) => keyPrincipal(parsed, r)) : keyPrincipal(parsed, row);
}

async function sessionPrincipal(req: ApiRequest): Promise<CustomerPrincipal> {
  const session = await accountFromSessionCookie(req);
  if (session) return { accountId: session.accountId, via: 'session' };
  throw unauthorized('Missing Authorization header; send "Authorization: Bearer <API key>".');
}

function keyPrincipal(parsed: ParsedKey, row: KeyRow | null): CustomerPrincipal {
  if (!row || row.env !== parsed.env || !secretMatches(parsed.secret, row.secretHash)) {
    throw unauthorized('Unknown or invalid API key.');
  }
  if (row.revokedAt) throw unauthorized('This API key has been revoked.');
  markKeyUsed(row.keyId);
  return { accountId: row.accountId, via: 'api_key', keyId: row.keyId };
}

type KeyRow = NonNullable<Awaited<ReturnType<typeof getApiKeyForAuth>>>;

/** How long this process may trust a key it read: the bound on serving a revoked key (docs/contracts.md §5, §9). */
export const API_KEY_CACHE_MS = 1000;
const CACHE_LIMIT = 10_000;

/**
 * API keys read in the last second, per process (and per module copy: Next's bundle and
 * server.ts each keep one). A revocation reaches every instance through lib/cache/invalidation
 * at once; when that message is lost (Redis away, or a CLI on PostgreSQL without Redis), an
 * entry still lives at most API_KEY_CACHE_MS counted from when its read STARTED, so a key
 * revoked at time t is refused from t + 1 s at the latest. A read that overlaps an invalidation
 * is used once but not kept. Unknown keys are not cached.
 */
const keyCache = new Map<string, { row: KeyRow; readAt: number }>();
let generation = 0;
let listening = false;

/** The key's row: at once from the cache, else a promise of the database's answer. */
function findApiKey(keyId: string): KeyRow | Promise<KeyRow | null> {
  if (!listening) {
    listening = true;
    onInvalidation('api-key', (id) => {
      keyCache.delete(id);
      generation++;
    });
  }
  const now = performance.now();
  const hit = keyCache.get(keyId);
  if (hit && now - hit.readAt < API_KEY_CACHE_MS) return hit.row;
  if (hit) keyCache.delete(keyId);
  return readApiKey(keyId, now);
}

async function readApiKey(keyId: string, now: number): Promise<KeyRow | null> {
  const startedGeneration = generation;
  const row = await getApiKeyForAuth(await getDb(), keyId);
  if (row && generation === startedGeneration) {
    if (keyCache.size >= CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value!);
    keyCache.set(keyId, { row, readAt: now });
  }
  return row;
}

/**
 * last_used_at without a write per request: uses are noted in memory and written in one
 * statement every API_KEY_USAGE_FLUSH_MS (and at shutdown). Shared through globalThis so the
 * server's shutdown flushes what the route handlers noted.
 */
type UsageState = { pending: Map<string, Date>; timer?: NodeJS.Timeout };
const usageState = (): UsageState => processSingleton('svc.apiKeyUsage', () => ({ pending: new Map() }));

function markKeyUsed(keyId: string): void {
  const state = usageState();
  state.pending.set(keyId, new Date());
  scheduleFlush(state);
}

function scheduleFlush(state: UsageState): void {
  if (state.timer) return;
  state.timer = setTimeout(() => {
    void flushApiKeyUsage();
  }, getEnv().API_KEY_USAGE_FLUSH_MS);
  state.timer.unref();
}

export async function flushApiKeyUsage(): Promise<void> {
  const state = usageState();
  if (state.timer) {
    clearTimeout(state.timer);
    state.timer = undefined;
  }
  if (state.pending.size === 0) return;
  const uses = [...state.pending].map(([keyId, at]) => ({ keyId, at }));
  state.pending.clear();
  try {
    await recordApiKeysUsed(await getDb(), uses);
  } catch (e) {
    // Keep the marks for the next attempt rather than losing them while the database is away.
    for (const u of uses) if (!state.pending.has(u.keyId)) state.pending.set(u.keyId, u.at);
    scheduleFlush(state);
    console.error('could not record API key usage:', (e as Error).message);
  }
}
