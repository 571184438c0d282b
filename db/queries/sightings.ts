import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';

export type Sighting = { clientId: string; accountId: number; origin: string; version: string; day: string; count: number };

export async function addSightings(db: Db, batch: Sighting[]) {
  if (batch.length === 0) return;
  const values = sql.join(
    batch.map((s) => sql`(${s.clientId}::text, ${s.accountId}::int, ${s.origin}::text, ${s.version}::text, ${s.day}::date, ${s.count}::int)`),
    sql`, `,
  );
  // A client deleted since (its account too) drops its sightings rather than failing the others'.
  await db.execute(sql`
    INSERT INTO widget_sightings (client_id, account_id, origin, widget_version, day, connections)
    SELECT v.* FROM (VALUES ${values}) v (client_id, account_id, origin, widget_version, day, connections)
    WHERE EXISTS (SELECT 1 FROM widget_clients c WHERE c.id = v.client_id)
    ON CONFLICT (client_id, origin, widget_version, day) DO UPDATE SET connections = widget_sightings.connections + excluded.connections`);
}

export async function listSightings(db: Db, accountId: number, days: number) {
  return rows<{ client_id: string; origin: string; widget_version: string; connections: number; last_day: string }>(
    db,
    sql`
    SELECT client_id, origin, widget_version, sum(connections)::int AS connections, to_char(max(day), 'YYYY-MM-DD') AS last_day
    FROM widget_sightings WHERE account_id = ${accountId} AND day > current_date - ${days}::int
    GROUP BY client_id, origin, widget_version ORDER BY connections DESC`,
  );
}
