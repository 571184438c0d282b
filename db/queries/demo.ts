import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';

/** A wall-clock moment of the demo's seeding and how far to move what was written from then on. */
export type DemoMark = { at: Date; shiftMs: number };

/**
 * Moves every timestamp of one demo conversation (its row, answers, messages, events and answer
 * runs) by the shift of the last mark at or before it, so steps seeded milliseconds apart read as
 * minutes apart. Tenancy: only the account's conversation is touched.
 */
export async function retimeDemoConversation(db: Db, accountId: number, conversationId: string, marks: DemoMark[]): Promise<void> {
  if (marks.length === 0) return;
  const list = sql.join(
    marks.map((m) => sql`(${m.at.toISOString()}::timestamptz, ${m.shiftMs}::float8)`),
    sql`, `,
  );
  const first = marks[0]!.shiftMs;
  const moved = (column: string) => {
    const c = sql.raw(column);
    return sql`${c} + make_interval(secs => COALESCE((SELECT m.shift FROM (VALUES ${list}) m(at, shift) WHERE m.at <= ${c} ORDER BY m.at DESC LIMIT 1), ${first}::float8) / 1000)`;
  };
  await db.transaction(async (tx) => {
    await tx.execute(sql`
      UPDATE conversations SET created_at = ${moved('created_at')}, updated_at = ${moved('updated_at')},
        waiting_since = ${moved('waiting_since')}, resolved_at = ${moved('resolved_at')}, handed_off_at = ${moved('handed_off_at')},
        first_reply_at = ${moved('first_reply_at')}, waiting_mailed_at = ${moved('waiting_mailed_at')}
      WHERE account_id = ${accountId} AND id = ${conversationId}`);
    await tx.execute(sql`
      UPDATE responses SET created_at = ${moved('created_at')}, updated_at = ${moved('updated_at')}
      WHERE account_id = ${accountId} AND conversation_id = ${conversationId}`);
    await tx.execute(sql`
      UPDATE conversation_messages SET created_at = ${moved('created_at')}, seen_at = ${moved('seen_at')}, mailed_at = ${moved('mailed_at')}
      WHERE account_id = ${accountId} AND conversation_id = ${conversationId}`);
    await tx.execute(sql`
      UPDATE chat_answers SET created_at = ${moved('created_at')}, finished_at = ${moved('finished_at')}, lease_until = ${moved('lease_until')}
      WHERE account_id = ${accountId} AND conversation_id = ${conversationId}`);
    await tx.execute(sql`
      UPDATE conversation_events SET created_at = ${moved('created_at')}
      WHERE conversation_id = ${conversationId} AND EXISTS (SELECT 1 FROM conversations c WHERE c.id = ${conversationId} AND c.account_id = ${accountId})`);
  });
}

/** The database's clock (the one its rows are stamped with), a millisecond after the last write. */
export async function databaseClock(db: Db): Promise<Date> {
  await new Promise((r) => setTimeout(r, 2));
  const [row] = await rows<{ at: string }>(db, sql`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`);
  return new Date(row!.at);
}
