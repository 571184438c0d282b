import type { Db } from '../../db/client';
import { getConversationById } from '../../db/queries/conversations';
import { getResponseById } from '../../db/queries/responses';
import { hasSubscribedEndpoint } from '../../db/queries/webhooks';
import { recordWebhookEvent as recordEvent, type WebhookEventType } from '../conversations/outbox';
import { toConversationRecord } from '../conversations/service';
import { toResponseRecord } from '../responses/service';

export { webhookEventsCommitted } from '../conversations/outbox';

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
