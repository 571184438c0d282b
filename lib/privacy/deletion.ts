import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../db/client';
import { keepInsightsDays, refreshInsightsBeforeDeleting } from '../../db/queries/insights';
import { deleteConversationRows, type DeletedRows } from '../../db/queries/privacy';
import { publishInboxEvent } from '../conversations/events';
import { webhookEventsCommitted } from '../conversations/outbox';
import { getLogger } from '../core/logger';
import { legacyUploadsDir } from '../uploads/maintenance';

/** Conversations per transaction: each batch is one short transaction, so a kill leaves every conversation whole or gone. */
export const DELETE_BATCH = 500;

export type DeletionReason = 'retention' | 'erasure';

/**
 * Runs inside a batch's transaction after its rows are deleted: where a change log (the audit log)
 * records the batch in the same transaction.
 */
export type InBatch = (tx: Db, deleted: DeletedRows, ids: string[]) => Promise<void>;

/**
 * Deletes one batch of the account's conversations with everything about them, in ONE transaction:
 * `pick` locks the conversations to delete (at most DELETE_BATCH); their past insights days are
 * rolled up and kept first (their figures never change afterwards); every row about them goes
 * (db/queries/privacy.ts deleteConversationRows) with one `conversation.deleted` webhook each.
 */
export async function deleteConversationBatch(
  db: Db,
  accountId: number,
  pick: (tx: Db) => Promise<string[]>,
  reason: DeletionReason,
  inBatch?: InBatch,
): Promise<DeletedRows> {
  await refreshInsightsBeforeDeleting(db, accountId);
  const { deleted, ids } = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const ids = await pick(tx);
    if (ids.length === 0) return { deleted: { conversations: 0, responses: 0, uploads: 0, webhooks: 0, storage_names: [] }, ids };
    await keepInsightsDays(tx, accountId, ids);
    const rows = await deleteConversationRows(tx, accountId, ids, reason, new Date().toISOString());
    await inBatch?.(tx, rows, ids);
    return { deleted: rows, ids };
  });
  webhookEventsCommitted(deleted.webhooks);
  // Members with the inbox or a transcript open see it go (their lists re-read once, calmly).
  for (const id of ids) publishInboxEvent({ account_id: accountId, conversation_id: id, kind: 'deleted' });
  removeLegacyFiles(deleted.storage_names);
  return deleted;
}

/** Uploads an older version kept as files (moved into the database at start-up; a row still naming one has its file removed too). */
function removeLegacyFiles(names: string[]): void {
  for (const name of names) {
    try {
      fs.rmSync(path.join(legacyUploadsDir(), path.basename(name)), { force: true });
    } catch (e) {
      getLogger().warn({ err: e }, 'could not remove an erased upload file');
    }
  }
}
