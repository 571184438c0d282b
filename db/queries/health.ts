import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';

export async function pingDatabase(db: Db): Promise<void> {
  await db.execute(sql`SELECT 1`);
}

/** Connections of one pool (by application_name) by state, from pg_stat_activity. PostgreSQL only. */
export async function countPoolConnections(db: Db, applicationName: string): Promise<Record<string, number>> {
  const found = await rows<{ state: string | null; n: number }>(
    db,
    sql`
    SELECT coalesce(state, 'unknown') AS state, count(*)::int AS n FROM pg_stat_activity
    WHERE application_name = ${applicationName} AND datname = current_database() GROUP BY 1`,
  );
  const out: Record<string, number> = { active: 0, idle: 0, 'idle in transaction': 0 };
  for (const r of found) out[r.state ?? 'unknown'] = (out[r.state ?? 'unknown'] ?? 0) + Number(r.n);
  return out;
}

/** The primary's current WAL position in bytes (a replica's lag is measured against its history). PostgreSQL only. */
export async function walPosition(db: Db): Promise<bigint> {
  const [row] = await rows<{ lsn: string }>(db, sql`SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::text AS lsn`);
  return BigInt(row!.lsn);
}

/** How far a replica has replayed the WAL, in bytes; null on a server that is not replaying (a primary). */
export async function replayPosition(db: Db): Promise<bigint | null> {
  const [row] = await rows<{ lsn: string | null }>(
    db,
    sql`SELECT CASE WHEN pg_is_in_recovery() THEN (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::text END AS lsn`,
  );
  return row?.lsn == null ? null : BigInt(row.lsn);
}
