import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { getDb } from '../../db/client';
import {
  ACCOUNT_HOLDINGS,
  claimAccountDeletion,
  deleteAccountRow,
  deleteHoldingBatch,
  getAccountForDeletion,
  listLegacyUploadFiles,
  markAccountDeleted,
  renewAccountDeletion,
  tablesStillHolding,
} from '../../db/queries/account-deletion';
import { AccountId } from '../accounts/contract';
import { validate } from '../accounts/service';
import { requireRole, type Role } from '../auth/roles';
import { sessionsOfAccountChanged } from '../auth/session-events';
import { publishInvalidation } from '../cache/invalidation';
import { AppError } from '../core/errors';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { legacyUploadsDir } from '../uploads/maintenance';

/**
 * Deleting an account (docs/contracts.md §18), in two steps. First one quick transaction marks it
 * deleted: from its commit every door refuses it (keys, widget clients and sessions are gone, the
 * sign-in, session and claim queries skip a marked account) and every instance drops what it
 * cached or holds open. Then its rows go table by table in batches, so no statement holds a lock
 * long; whoever holds the deletion's lease does it, and any instance's sweep takes over a lease
 * that lapsed (its process died). The last row deleted is the account's own.
 */
export const DeleteAccountInput = z.object({
  accountId: AccountId,
  confirm: z.string({ error: 'type the account name to confirm' }).trim().min(1, 'type the account name to confirm').max(1000),
});

export type DeletedAccount = { deleted: true; account_id: number };
export type DeletionProgress = { table: string; rows: number };

/** Gives up a deletion that keeps finding new rows after this many passes (the sweep tries again later). */
const MAX_PASSES = 5;

/** The owner's door (the /privacy page): marks the account; this instance's sweep starts on its rows at once. */
export async function deleteAccountAsOwner(actor: { accountId: number; role: Role; email: string }, confirm: unknown): Promise<DeletedAccount> {
  requireRole(actor, 'account.delete');
  const v = validate(DeleteAccountInput, { accountId: actor.accountId, confirm }, { confirm: 'confirm' });
  await markForDeletion(v.accountId, v.confirm, actor.email, null);
  sweep.wake();
  return { deleted: true, account_id: v.accountId };
}

/** The operator's door (`account delete` of the CLI): marks the account and deletes every row before it returns. */
export async function deleteAccountByOperator(
  input: { accountId: unknown; confirm: unknown },
  onProgress?: (p: DeletionProgress) => void,
): Promise<DeletedAccount> {
  const v = validate(DeleteAccountInput, input, { accountId: 'account', confirm: 'confirm' });
  await markForDeletion(v.accountId, v.confirm, 'cli', getEnv().ACCOUNT_DELETION_LEASE_SECONDS);
  await deleteAccountRows(v.accountId, { onProgress });
  return { deleted: true, account_id: v.accountId };
}

async function markForDeletion(accountId: number, confirm: string, by: string, leaseSeconds: number | null): Promise<void> {
  const db = await getDb();
  const marked = await markAccountDeleted(db, accountId, confirm, leaseSeconds);
  if (!marked) {
    const found = await getAccountForDeletion(db, accountId);
    if (!found) throw new AppError('not_found', `No account with id ${accountId}.`);
    if (found.deleted) throw new AppError('conflict', `Account ${accountId} is already being deleted; its rows are removed in the background.`);
    throw new AppError('invalid_request', 'The name typed does not match the account name; nothing was deleted.', {
      errors: [{ param: 'confirm', message: 'does not match the account name' }],
    });
  }
  // The operator's record: the account's own rows (an audit log included) are about to go.
  getLogger().info(
    { account_id: accountId, by, api_keys: marked.keyIds.length, widget_clients: marked.clientIds.length, members: marked.userIds.length },
    'account deletion started',
  );
  // Every instance drops what it cached and closes what it holds open for the account.
  await Promise.all([
    ...marked.keyIds.map((id) => publishInvalidation('api-key', id)),
    ...marked.clientIds.map((id) => publishInvalidation('widget-client', id)),
    sessionsOfAccountChanged(accountId),
  ]);
}

/**
 * Deletes every row of a marked account, children before parents, a batch per statement, then
 * checks every table again (a writer that was already past its door may have added a row) and
 * finally deletes the account's row. False when `shouldStop` ended it early (the lease lapses and
 * the sweep carries on). Safe to run again at any point.
 */
export async function deleteAccountRows(
  accountId: number,
  o: { shouldStop?: () => boolean; onProgress?: (p: DeletionProgress) => void } = {},
): Promise<boolean> {
  const db = await getDb();
  const { ACCOUNT_DELETION_BATCH: batch, ACCOUNT_DELETION_LEASE_SECONDS: lease } = getEnv();
  const started = Date.now();
  let renewedAt = started;
  const removed: Record<string, number> = {};
  await removeLegacyUploadFiles(accountId);
  for (let pass = 1; ; pass++) {
    for (const h of ACCOUNT_HOLDINGS) {
      let rows = 0;
      for (;;) {
        if (o.shouldStop?.()) return false;
        const n = await deleteHoldingBatch(db, h, accountId, batch);
        rows += n;
        if (Date.now() - renewedAt > (lease * 1000) / 3) {
          await renewAccountDeletion(db, accountId, lease);
          renewedAt = Date.now();
        }
        if (n === 0 || n < Math.floor(batch * (h.batch ?? 1))) break;
      }
      if (rows > 0) {
        removed[h.table] = (removed[h.table] ?? 0) + rows;
        o.onProgress?.({ table: h.table, rows });
      }
    }
    const left = await tablesStillHolding(db, accountId);
    if (left.length === 0) break;
    if (pass >= MAX_PASSES) throw new Error(`account ${accountId}: rows keep appearing in ${left.join(', ')}; the sweep tries again`);
  }
  const gone = await deleteAccountRow(db, accountId);
  if (gone) {
    const total = Object.values(removed).reduce((a, b) => a + b, 0);
    getLogger().info({ account_id: accountId, rows: total, tables: removed, ms: Date.now() - started }, 'account deleted');
  }
  return true;
}

/** Uploads still in an old local DATA_DIR/uploads: their files go before their rows. */
async function removeLegacyUploadFiles(accountId: number): Promise<void> {
  const db = await getDb();
  const dir = legacyUploadsDir();
  for (let after = ''; ; ) {
    const page = await listLegacyUploadFiles(db, accountId, after, 500);
    for (const f of page) fs.rmSync(path.join(dir, path.basename(f.storage_name)), { force: true });
    if (page.length < 500) return;
    after = page.at(-1)!.id;
  }
}

/**
 * Every instance's sweep: takes a marked account nobody carries on (marked from the dashboard, or
 * left by a process that died) and deletes its rows; one account a step, the next at once.
 */
const sweep = processLoop('svc.accountDeletionSweep');

export function startAccountDeletionSweep(): void {
  sweep.start({
    pollMs: getEnv().ACCOUNT_DELETION_SWEEP_SECONDS * 1000,
    step: async (loop) => {
      const accountId = await claimAccountDeletion(await getDb(), getEnv().ACCOUNT_DELETION_LEASE_SECONDS);
      if (accountId === null) return false;
      await deleteAccountRows(accountId, { shouldStop: () => loop.stopping });
      return true;
    },
    onDown: (e) => getLogger().error({ err: e }, 'account deletion sweep: cannot finish a deletion; retrying'),
  });
}

export async function stopAccountDeletionSweep(): Promise<void> {
  await sweep.stop();
}
