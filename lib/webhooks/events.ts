import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client';
import { getConversationById } from '../../db/queries/conversations';
import { getResponseById } from '../../db/queries/responses';
import { hasSubscribedEndpoint, insertWebhookEvent } from '../../db/queries/webhooks';
import { toConversationRecord } from '../conversations/service';
import { toResponseRecord } from '../responses/service';
import type { WebhookEventType } from './rules';
import { wakeWebhookWorker } from './wake';

/**
 * Records a webhook event in the outbox (docs/contracts.md §11). Call it INSIDE the transaction of the
 * change, after the change: `data` is the record as the Customer API returns it at that moment
 * (the same serializers), so a stop or crash delays a delivery but never loses it. Accounts
 * without a subscribed endpoint write nothing. Returns the number of deliveries queued.
 * `subscribed`: the caller has just asked (changeWithEvent), so the outbox is not asked again.
 */
async function recordEvent(tx: Db, accountId: number, type: WebhookEventType, conversationId: string, data: () => Promise<object | null>, subscribed: boolean) {
  if (!subscribed && !(await hasSubscribedEndpoint(tx, accountId, type))) return 0;
  const record = await data();
  if (!record) return 0;
  const id = `msg_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({ type, timestamp: new Date().toISOString(), data: record });
  return insertWebhookEvent(tx, accountId, { id, type, conversationId, body });
}

export function recordConversationCreated(tx: Db, accountId: number, conversationId: string, subscribed = false) {
  return recordEvent(
    tx,
    accountId,
    'conversation.created',
    conversationId,
    async () => {
      const row = await getConversationById(tx, accountId, conversationId);
      return row && toConversationRecord(row);
    },
    subscribed,
  );
}

/** `response.created` when an answer is stored; `response.feedback` after a like, dislike or comment changed it. */
export function recordResponseEvent(
  tx: Db,
  accountId: number,
  type: 'response.created' | 'response.feedback',
  conversationId: string,
  responseId: string,
  subscribed = false,
) {
  return recordEvent(
    tx,
    accountId,
    type,
    conversationId,
    async () => {
      const row = await getResponseById(tx, accountId, responseId);
      return row && toResponseRecord(row);
    },
    subscribed,
  );
}

/**
 * Runs a change and records its webhook event with it. Whether the account has an endpoint for
 * `type` is asked first: without one (most accounts, most of the time) the change runs on its own,
 * as the single statement it is, so no transaction stays open across round trips while the change
 * holds the account's counter rows (every answer of an account updates the same rows); with one,
 * the change and its outbox event commit together, as before (`event` need not ask again). An
 * endpoint subscribed while a change is in flight may miss that change either way (the check,
 * inside or outside the transaction, sees endpoints committed before it ran).
 */
export async function changeWithEvent<T>(
  db: Db,
  accountId: number,
  type: WebhookEventType,
  change: (db: Db) => Promise<T>,
  event: (tx: Db, result: T) => Promise<number>,
): Promise<{ result: T; queued: number }> {
  if (!(await hasSubscribedEndpoint(db, accountId, type))) return { result: await change(db), queued: 0 };
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const result = await change(tx);
    return { result, queued: await event(tx, result) };
  });
}

/** After the transaction committed: local workers look at once (others within their poll interval). */
export function webhookEventsCommitted(queued: number) {
  if (queued > 0) wakeWebhookWorker();
}
