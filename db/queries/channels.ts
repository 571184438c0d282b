import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';

/** Fresh service-wide channel ids from the channels sequence (imports may bring their own). */
export async function allocateChannelIds(db: Db, n: number): Promise<number[]> {
  const r = await rows<{ id: number }>(db, sql`
    SELECT nextval(pg_get_serial_sequence('channels', 'id'))::int AS id FROM generate_series(1, ${n})`);
  return r.map((x) => x.id);
}

export async function listChannels(db: Db, accountId: number) {
  return rows<{ id: number; name: string; conversation_count: number; response_count: number }>(db, sql`
    SELECT id, name, conversation_count, response_count FROM channels WHERE account_id = ${accountId} ORDER BY id`);
}

export async function insertChannel(db: Db, accountId: number, name: string): Promise<number> {
  const [row] = await rows<{ id: number }>(db, sql`INSERT INTO channels (account_id, name) VALUES (${accountId}, ${name}) RETURNING id`);
  return row!.id;
}

export async function channelBelongsTo(db: Db, accountId: number, channelId: number): Promise<boolean> {
  const r = await rows<{ id: number }>(db, sql`SELECT id FROM channels WHERE id = ${channelId} AND account_id = ${accountId}`);
  return r.length > 0;
}
