import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/**
 * The audit log (docs/contracts.md §18). Rows are only ever inserted: migration 0030's triggers refuse
 * UPDATE and TRUNCATE, and DELETE unless the transaction set `svc.audit_delete`, which only
 * pruneAuditLog (retention) and deleteAccountAuditLog (account deletion) do.
 */

export type AuditRow = { id: string; at: string; actor: string; action: string; target: string; ip: string | null };

/** One entry, on the handle of the transaction that makes the change it records. */
export async function insertAuditEntry(tx: Db, accountId: number, e: { actor: string; action: string; target: string; ip: string | null }) {
  await tx.execute(sql`INSERT INTO audit_log (account_id, actor, action, target, ip) VALUES (${accountId}, ${e.actor}, ${e.action}, ${e.target}, ${e.ip})`);
}

/**
 * A page of the account's entries, newest first (at, then id). `before`: the id of the last entry
 * of the previous page (keyset; an id of another account matches nothing). Filters are exact.
 */
export async function listAuditEntries(db: Db, accountId: number, q: { limit: number; before?: number; actor?: string; action?: string }) {
  const after =
    q.before === undefined ? sql`` : sql` AND (a.at, a.id) < (SELECT b.at, b.id FROM audit_log b WHERE b.id = ${q.before} AND b.account_id = ${accountId})`;
  const actor = q.actor === undefined ? sql`` : sql` AND a.actor = ${q.actor}`;
  const action = q.action === undefined ? sql`` : sql` AND a.action = ${q.action}`;
  return rows<AuditRow>(
    db,
    sql`SELECT a.id::text AS id, ${utcText(sql`a.at`)} AS at, a.actor, a.action, a.target, a.ip
      FROM audit_log a WHERE a.account_id = ${accountId}${after}${actor}${action}
      ORDER BY a.at DESC, a.id DESC LIMIT ${q.limit}`,
  );
}

/** The actors of the account's entries (the "Member" filter also offers past members and cli/system). */
export async function listAuditActors(db: Db, accountId: number): Promise<string[]> {
  const found = await rows<{ actor: string }>(db, sql`SELECT DISTINCT actor FROM audit_log WHERE account_id = ${accountId} ORDER BY actor LIMIT 500`);
  return found.map((r) => r.actor);
}

/** Deletes up to `batch` entries older than `days` days (any account); returns how many went. */
export async function pruneAuditLog(db: Db, days: number, batch: number): Promise<number> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT set_config('svc.audit_delete', 'on', true)`);
    const gone = await rows<{ n: number }>(
      tx as unknown as Db,
      sql`WITH old AS (
          SELECT id FROM audit_log WHERE at < now() - make_interval(days => ${days}) ORDER BY at, id LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        , d AS (DELETE FROM audit_log WHERE id IN (SELECT id FROM old) RETURNING 1)
        SELECT count(*)::int AS n FROM d`,
    );
    return gone[0]?.n ?? 0;
  });
}
