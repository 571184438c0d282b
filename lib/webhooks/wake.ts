/**
 * Wakes this process's delivery worker (per process by nature: other instances find new
 * deliveries by polling). Shared through globalThis: Next's bundles hold their own module copies.
 */
const KEY = Symbol.for('svc.webhookWake');
type Holder = { [KEY]?: () => void };

export function setWebhookWake(fn: (() => void) | undefined) {
  (globalThis as Holder)[KEY] = fn;
}

export function wakeWebhookWorker() {
  (globalThis as Holder)[KEY]?.();
}
