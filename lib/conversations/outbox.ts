import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client';
import { hasSubscribedEndpoint, insertWebhookEvent } from '../../db/queries/webhooks';
import { processSlot } from '../core/process';

/**
 * The webhook outbox as a conversation's writers see it (docs/contracts.md §11): the event types and
 * the one function that records an event inside the change's transaction. Here, below
 * lib/webhooks (the delivery side), because the conversation's own services (handoff) record
 * events too; lib/webhooks/events.ts builds its recorders on it.
 */
export const WEBHOOK_EVENT_TYPES = [
  'conversation.created',
  'response.created',
  'response.feedback',
  'conversation.status_changed',
  'message.created',
  'csat.submitted',
  'conversation.deleted',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * Records a webhook event in the outbox. Call it INSIDE the transaction of the change, after the
 * change: `data` is the record as the Customer API returns it at that moment, so a stop or crash
 * delays a delivery but never loses it. Accounts without a subscribed endpoint write nothing.
 * Returns the number of deliveries queued. `subscribed`: the caller has just asked.
 */
export async function recordWebhookEvent(
  tx: Db,
  accountId: number,
  type: WebhookEventType,
  conversationId: string,
  data: () => Promise<object | null>,
  subscribed = false,
): Promise<number> {
  if (!subscribed && !(await hasSubscribedEndpoint(tx, accountId, type))) return 0;
  const record = await data();
  if (!record) return 0;
  const id = `msg_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({ type, timestamp: new Date().toISOString(), data: record });
  return insertWebhookEvent(tx, accountId, { id, type, conversationId, body });
}

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

/** After the transaction committed: local workers look at once (others within their poll interval). */
export function webhookEventsCommitted(queued: number) {
  if (queued > 0) wakeWebhookWorker();
}
