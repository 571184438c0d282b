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
