import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * The rows an account holds, table by table, in the order they are deleted: children before their
 * parents, so no batch waits on a foreign key and none cascades into a long statement. `of` picks
 * the account's rows (default: `account_id = the account`); `batch` scales the batch for wide rows;
 * `unlock` names the transaction-local setting a guarded table's trigger wants before a DELETE.
 * A new table with an account_id column gets a line here (tests/api/account-deletion.test.ts fails
 * until it does).
 */
type Holding = { table: string; of?: (accountId: number) => SQL; batch?: number; unlock?: string };

const ofUsers = (accountId: number) => sql`user_id IN (SELECT id FROM admin_users WHERE account_id = ${accountId})`;
const ofConversations = (accountId: number) => sql`conversation_id IN (SELECT id FROM conversations WHERE account_id = ${accountId})`;

export const ACCOUNT_HOLDINGS: readonly Holding[] = [
  // 256 KiB a row: a tenth of the batch.
  { table: 'upload_chunks', of: (a) => sql`upload_id IN (SELECT id FROM attachments WHERE account_id = ${a})`, batch: 0.1 },
  { table: 'attachments' },
  // The cases first: with none left, the knowledge base's deletes below count no change to test.
  { table: 'answer_test_cases' },
  { table: 'kb_chunk_embeddings' },
  { table: 'kb_chunks' },
  { table: 'kb_documents' },
  { table: 'kb_versions' },
  { table: 'kb_sites' },
  { table: 'response_feedback', of: (a) => sql`response_id IN (SELECT id FROM responses WHERE account_id = ${a})` },
  { table: 'response_comments' },
  { table: 'email_answers' },
  { table: 'chat_answers' },
  { table: 'conversation_events', of: ofConversations },
  { table: 'conversation_messages' },
  { table: 'webhook_deliveries' },
  { table: 'webhook_events' },
  { table: 'webhook_endpoints' },
  { table: 'inbound_mails', batch: 0.1 },
  { table: 'responses' },
  { table: 'conversations' },
  // After the conversations: what the loops write about them (mail, counts, insights) has no writer left.
  { table: 'mails' },
  { table: 'conversation_counts' },
  { table: 'insights_dirty_days' },
  { table: 'insights_daily' },
  { table: 'insights_kept_days' },
  { table: 'widget_clients' },
  { table: 'widget_sightings' },
  { table: 'widget_refusals' },
  { table: 'channels' },
  { table: 'canned_replies' },
  { table: 'curated_answers' },
  { table: 'synonym_groups' },
  { table: 'gap_dismissals' },
  { table: 'answer_test_state' },
  { table: 'bot_settings' },
  { table: 'handoff_settings' },
  { table: 'team_settings' },
  { table: 'api_keys' },
  { table: 'invitations' },
  { table: 'admin_sessions', of: ofUsers },
  { table: 'recovery_codes', of: ofUsers },
  { table: 'email_tokens', of: ofUsers },
  { table: 'admin_users' },
  // Append-only for every other door (db/queries/audit.ts); the account's log goes with it (docs/contracts.md §18).
  { table: 'audit_log', unlock: 'svc.audit_delete' },
];

const rowsOf = (h: Holding, accountId: number) => (h.of ? h.of(accountId) : sql`account_id = ${accountId}`);

/** Deletes up to `limit` of the account's rows of one table (by ctid: any table, one index probe a row); returns how many. */
export async function deleteHoldingBatch(db: Db, h: Holding, accountId: number, limit: number): Promise<number> {
  const table = sql.identifier(h.table);
  const n = Math.max(1, Math.floor(limit * (h.batch ?? 1)));
  if (h.unlock) {
    const unlock = h.unlock;
    return db.transaction(async (t) => {
      await t.execute(sql`SELECT set_config(${unlock}, 'on', true)`);
      return deleteHoldingBatch(t as unknown as Db, { ...h, unlock: undefined }, accountId, limit);
    });
  }
  const [row] = await rows<{ n: number }>(
    db,
    sql`WITH gone AS (
      DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${rowsOf(h, accountId)} LIMIT ${n})) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone`,
  );
  return row?.n ?? 0;
}

/** The tables where the account still holds a row (a concurrent writer's straggler makes another pass). */
export async function tablesStillHolding(db: Db, accountId: number): Promise<string[]> {
  const checks = ACCOUNT_HOLDINGS.map(
    (h) => sql`SELECT ${h.table}::text AS t WHERE EXISTS (SELECT 1 FROM ${sql.identifier(h.table)} WHERE ${rowsOf(h, accountId)})`,
  );
  const found = await rows<{ t: string }>(db, sql.join(checks, sql` UNION ALL `));
  return found.map((r) => r.t);
}

export type MarkedAccount = { keyIds: string[]; clientIds: string[]; userIds: number[] };

/**
 * The one quick transaction that makes every door refuse the account: it is marked deleted (the
 * sign-in, session, account and claim queries skip it), its API keys and widget clients go, its
 * members' sessions and pending invitations go, its webhook endpoints are paused. `leaseSeconds`
 * null leaves the rest to the sweep (any instance); a number keeps it for the caller. Null when
 * no live account has that id and name.
 */
export async function markAccountDeleted(db: Db, accountId: number, name: string, leaseSeconds: number | null): Promise<MarkedAccount | null> {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const lease = leaseSeconds === null ? sql`NULL` : sql`now() + make_interval(secs => ${leaseSeconds})`;
    const marked = await rows<{ id: number }>(
      tx,
      sql`UPDATE accounts SET deleted_at = now(), deletion_lease_until = ${lease}, inbound_local = NULL
      WHERE id = ${accountId} AND name = ${name} AND deleted_at IS NULL RETURNING id`,
    );
    if (marked.length === 0) return null;
    const keys = await rows<{ key_id: string }>(tx, sql`DELETE FROM api_keys WHERE account_id = ${accountId} RETURNING key_id`);
    const clients = await rows<{ id: string }>(tx, sql`DELETE FROM widget_clients WHERE account_id = ${accountId} RETURNING id`);
    const users = await rows<{ id: number }>(tx, sql`SELECT id FROM admin_users WHERE account_id = ${accountId}`);
    await tx.execute(sql`DELETE FROM admin_sessions WHERE ${ofUsers(accountId)}`);
    await tx.execute(sql`DELETE FROM email_tokens WHERE ${ofUsers(accountId)}`);
    await tx.execute(sql`DELETE FROM invitations WHERE account_id = ${accountId}`);
    await tx.execute(sql`UPDATE webhook_endpoints SET paused_at = now(), pause_reason = 'account deleted' WHERE account_id = ${accountId}`);
    return { keyIds: keys.map((k) => k.key_id), clientIds: clients.map((c) => c.id), userIds: users.map((u) => u.id) };
  });
}

/** Why a mark found nothing: no such account, already being deleted, or another name. */
export async function getAccountForDeletion(db: Db, accountId: number): Promise<{ name: string; deleted: boolean } | null> {
  const [row] = await rows<{ name: string; deleted: boolean }>(db, sql`SELECT name, deleted_at IS NOT NULL AS deleted FROM accounts WHERE id = ${accountId}`);
  return row ?? null;
}

/** Takes one marked account whose deletion nobody holds (no lease, or a lapsed one) for `leaseSeconds`; null when none. */
export async function claimAccountDeletion(db: Db, leaseSeconds: number): Promise<number | null> {
  const [row] = await rows<{ id: number }>(
    db,
    sql`UPDATE accounts SET deletion_lease_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE id = (
      SELECT id FROM accounts WHERE deleted_at IS NOT NULL AND (deletion_lease_until IS NULL OR deletion_lease_until < now())
      ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id`,
  );
  return row?.id ?? null;
}

/** Keeps the deletion's lease while it works. */
export async function renewAccountDeletion(db: Db, accountId: number, leaseSeconds: number): Promise<void> {
  await db.execute(
    sql`UPDATE accounts SET deletion_lease_until = now() + make_interval(secs => ${leaseSeconds}) WHERE id = ${accountId} AND deleted_at IS NOT NULL`,
  );
}

/** The last row: the account itself (a straggler that still refers to it fails this on its foreign key; the sweep tries again). */
export async function deleteAccountRow(db: Db, accountId: number): Promise<boolean> {
  const gone = await rows<{ id: number }>(db, sql`DELETE FROM accounts WHERE id = ${accountId} AND deleted_at IS NOT NULL RETURNING id`);
  return gone.length > 0;
}

/** Files of uploads still in an old local DATA_DIR/uploads (lib/uploads/maintenance.ts), a page at a time after `after`. */
export async function listLegacyUploadFiles(db: Db, accountId: number, after: string, limit: number): Promise<Array<{ id: string; storage_name: string }>> {
  return rows(
    db,
    sql`SELECT id::text AS id, storage_name FROM attachments
    WHERE account_id = ${accountId} AND storage_name IS NOT NULL AND id::text > ${after} ORDER BY id::text LIMIT ${limit}`,
  );
}

/** The SQL predicate "this account is not being deleted", for the claims of the background loops (an index probe on accounts). */
export function accountIsLive(accountId: SQL | AnyPgColumn): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM accounts del WHERE del.id = ${accountId} AND del.deleted_at IS NOT NULL)`;
}
