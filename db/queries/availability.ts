import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/** Whether a person is there (lib/conversations/availability.ts): members' availability and presence, first responses, handoff settings. */

export async function setMemberAvailability(db: Db, accountId: number, userId: number, availability: 'online' | 'away'): Promise<boolean> {
  const done = await rows<{ id: number }>(
    db,
    sql`UPDATE admin_users SET availability = ${availability} WHERE id = ${userId} AND account_id = ${accountId} RETURNING id`,
  );
  return done.length > 0;
}

export async function touchMemberDashboard(db: Db, accountId: number, userId: number): Promise<boolean> {
  const done = await rows<{ id: number }>(
    db,
    sql`UPDATE admin_users SET dashboard_seen_at = now() WHERE id = ${userId} AND account_id = ${accountId} RETURNING id`,
  );
  return done.length > 0;
}

/** Members `online` with a dashboard seen within `withinSeconds`. */
export async function countOnlineMembers(db: Db, accountId: number, withinSeconds: number): Promise<number> {
  const [row] = await rows<{ online: number }>(
    db,
    sql`
    SELECT count(*)::int AS online FROM admin_users WHERE account_id = ${accountId} AND availability = 'online'
      AND dashboard_seen_at >= now() - make_interval(secs => ${withinSeconds})`,
  );
  return row?.online ?? 0;
}

/** The latest `limit` first responses after a handoff within `days`: when the handoff was (UTC text) and how long the reply took. */
export async function listFirstResponses(db: Db, accountId: number, days: number, limit: number): Promise<Array<{ at: string; seconds: number }>> {
  return rows<{ at: string; seconds: number }>(
    db,
    sql`
    SELECT ${utcText(sql`handed_off_at`)} AS at, extract(epoch FROM first_reply_at - handed_off_at)::float8 AS seconds
    FROM conversations WHERE account_id = ${accountId} AND first_reply_at IS NOT NULL
      AND handed_off_at >= now() - make_interval(days => ${days}) ORDER BY handed_off_at DESC LIMIT ${limit}`,
  );
}

export type HandoffSettingsRow = { enabled: boolean; time_zone: string; hours: unknown; away_text: string };

export async function getHandoffSettingsRow(db: Db, accountId: number): Promise<HandoffSettingsRow | null> {
  const [row] = await rows<HandoffSettingsRow>(db, sql`SELECT enabled, time_zone, hours, away_text FROM handoff_settings WHERE account_id = ${accountId}`);
  if (row && typeof row.hours === 'string') row.hours = JSON.parse(row.hours);
  return row ?? null;
}

export async function upsertHandoffSettings(db: Db, accountId: number, s: HandoffSettingsRow): Promise<void> {
  await db.execute(sql`
    INSERT INTO handoff_settings (account_id, enabled, time_zone, hours, away_text, updated_at)
    VALUES (${accountId}, ${s.enabled}, ${s.time_zone}, ${JSON.stringify(s.hours)}::jsonb, ${s.away_text}, now())
    ON CONFLICT (account_id) DO UPDATE SET enabled = EXCLUDED.enabled, time_zone = EXCLUDED.time_zone,
      hours = EXCLUDED.hours, away_text = EXCLUDED.away_text, updated_at = now()`);
}
