import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/** One aggregated refusal: `count` attempts of one client from one origin, refused for one reason. */
export type RefusalBatchItem = {
  clientId: string;
  origin: string;
  stage: 'token' | 'socket';
  reason: string;
  detail: string;
  count: number;
  firstSeen: Date;
  lastSeen: Date;
};

/** Distinct origins kept per client; refusals from further origins are counted under OTHER_ORIGINS. */
export const ORIGINS_PER_CLIENT = 50;
export const OTHER_ORIGINS = '(other origins)';

/**
 * Adds counts in one statement. The account comes from the client row, so a refusal naming a
 * client that does not exist is dropped here; a client that already has ORIGINS_PER_CLIENT
 * origins recorded gets new ones folded into one row, so the table cannot grow without bound.
 */
export async function addRefusals(db: Db, batch: RefusalBatchItem[]) {
  if (batch.length === 0) return;
  const values = sql.join(
    batch.map(
      (r) =>
        sql`(${r.clientId}, ${r.origin}, ${r.stage}, ${r.reason}, ${r.detail}, ${r.count}::int, ${r.firstSeen.toISOString()}::timestamptz, ${r.lastSeen.toISOString()}::timestamptz)`,
    ),
    sql`, `,
  );
  await db.execute(sql`
    WITH v(client_id, origin, stage, reason, detail, n, first_seen, last_seen) AS (VALUES ${values}),
    j AS (
      SELECT v.*, c.account_id,
        CASE WHEN EXISTS (SELECT 1 FROM widget_refusals r WHERE r.client_id = v.client_id AND r.origin = v.origin)
               OR (SELECT count(DISTINCT r.origin) FROM widget_refusals r WHERE r.client_id = v.client_id) < ${ORIGINS_PER_CLIENT}
             THEN v.origin ELSE ${OTHER_ORIGINS} END AS kept_origin
      FROM v JOIN widget_clients c ON c.id = v.client_id
    )
    INSERT INTO widget_refusals (client_id, account_id, origin, stage, reason, detail, count, first_seen_at, last_seen_at)
    SELECT client_id, account_id, kept_origin, stage, reason, (array_agg(detail ORDER BY last_seen DESC))[1], sum(n)::int, min(first_seen), max(last_seen)
    FROM j GROUP BY client_id, account_id, kept_origin, stage, reason
    ON CONFLICT (client_id, origin, stage, reason) DO UPDATE SET
      count = widget_refusals.count + excluded.count,
      detail = excluded.detail,
      last_seen_at = greatest(widget_refusals.last_seen_at, excluded.last_seen_at)`);
}

/** Drops refusals not seen for `days` days. */
export async function pruneRefusals(db: Db, days: number) {
  await db.execute(sql`DELETE FROM widget_refusals WHERE last_seen_at < now() - make_interval(days => ${days}::int)`);
}

export type RefusalRow = {
  client_id: string;
  client_name: string;
  origin: string;
  stage: 'token' | 'socket';
  reason: string;
  detail: string;
  count: number;
  last_seen: string;
};

/** Rows listed per client at most (newest first), so one client's many rows never push out another's. */
export const LISTED_PER_CLIENT = 25;

export async function listRefusals(db: Db, accountId: number, days: number, limit = 500): Promise<RefusalRow[]> {
  return [
    ...(await rows<RefusalRow>(
      db,
      sql`
    SELECT client_id, client_name, origin, stage, reason, detail, count, last_seen FROM (
      SELECT r.client_id, coalesce(c.name, r.client_id) AS client_name, r.origin, r.stage, r.reason, r.detail, r.count,
        ${utcText(sql`r.last_seen_at`)} AS last_seen, r.last_seen_at,
        row_number() OVER (PARTITION BY r.client_id ORDER BY r.last_seen_at DESC, r.origin, r.stage, r.reason) AS nth
      FROM widget_refusals r LEFT JOIN widget_clients c ON c.id = r.client_id AND c.account_id = r.account_id
      WHERE r.account_id = ${accountId} AND r.last_seen_at > now() - make_interval(days => ${days}::int)
    ) per_client
    WHERE nth <= ${LISTED_PER_CLIENT}
    ORDER BY last_seen_at DESC, client_id, origin, stage, reason LIMIT ${limit}`,
    )),
  ];
}
