import { getEnv } from '../env';

/** Every rule and limit of webhook delivery (docs/contracts.md §11), in one place. */

export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../conversations/outbox';
/** The type of "Send test event" deliveries: no endpoint subscribes to it, each test names its endpoint. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * Waits after failed attempts 1, 2, …, in multiples of WEBHOOK_RETRY_BASE_MS: doubling from 1 to
 * 2048, then 4096 four more times. At the default 5 s base: 5 s, 10 s, … 2.8 h, then 5.7 h four
 * times — 17 attempts over 28.4 hours (the contract asks for at least 24). Then the delivery is `failed`.
 */
export const RETRY_MULTIPLIERS: readonly number[] = [...Array.from({ length: 12 }, (_, i) => 2 ** i), 4096, 4096, 4096, 4096];

/** An endpoint whose attempts have all failed for this long (5 days at the default base) is paused. */
export const PAUSE_AFTER_MULTIPLIER = 86_400;

/**
 * Deliveries in flight at once per endpoint, per account and in all, on one instance: a slow
 * receiver holds only its endpoint's slots, and an account's slow receivers only its quarter.
 */
export const IN_FLIGHT_PER_ENDPOINT = 4;
export const IN_FLIGHT_PER_ACCOUNT = 8;
export const IN_FLIGHT_TOTAL = 32;
/** An instance holds a claimed delivery this long; if it dies meanwhile, another sends it after. */
export const LEASE_SECONDS = 60;
/** Idle workers look for due deliveries (events of other instances, retries) this often. */
export const POLL_MS = 1000;
/** Secret rotation: the previous secret keeps signing this long. */
export const ROTATION_OVERLAP_HOURS = 24;
/** Response bodies are read up to this much (and discarded); the log keeps this much of an error. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
export const MAX_ERROR_CHARS = 300;
export const MAX_ENDPOINTS_PER_ACCOUNT = 50;
/** The delivery log shows an endpoint's latest this many deliveries. */
export const DELIVERY_LOG_LIMIT = 50;
/**
 * Paused endpoints: new deliveries are held (never claimed). Resuming sends the held ones created in
 * the last REPLAY_HOURS (the contract's retry promise), with a fresh schedule; older ones become `failed`.
 */
export const REPLAY_HOURS = 24;
export const HELD_TOO_LONG = `not sent: held for more than ${REPLAY_HOURS} hours while the endpoint was paused`;
/** Events whose deliveries are all finished (delivered or failed) are deleted after this many days, in batches, hourly. */
export const RETENTION_DAYS = 7;
export const PRUNE_EVERY_MS = 3_600_000;
export const PRUNE_BATCH = 1000;

/** The wait after failed attempt `attempts` (1-based), or null when the schedule has run out. */
export function retryDelayMs(attempts: number): number | null {
  const m = RETRY_MULTIPLIERS[attempts - 1];
  return m === undefined ? null : m * getEnv().WEBHOOK_RETRY_BASE_MS;
}

export function pauseAfterMs(): number {
  return PAUSE_AFTER_MULTIPLIER * getEnv().WEBHOOK_RETRY_BASE_MS;
}
