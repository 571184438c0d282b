import { processSlot } from '../core/process';

/**
 * Wakes this process's delivery worker (per process by nature: other instances find new
 * deliveries by polling). Shared through globalThis: Next's bundles hold their own module copies.
 */
const wake = processSlot<(() => void) | undefined>('svc.webhookWake');

export function setWebhookWake(fn: (() => void) | undefined) {
  wake.set(fn);
}

export function wakeWebhookWorker() {
  wake.get()?.();
}
