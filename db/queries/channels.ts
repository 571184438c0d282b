import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';

/*
 * Channel ids belong to their account (docs/contracts.md §3): the key is (account_id, id), and a new
 * channel takes the account's next free number. Allocation holds a per-account advisory lock for
 * the rest of its transaction, so two concurrent allocations in one account never pick the same id
 * (the INSERT's snapshot is taken after the lock is granted).
 */
async function lockAccountChannels(db: Db, accountId: number): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(hashtext('svc.channels'), ${accountId})`);
}

/** `n` fresh channel ids of the account (above its highest), for callers that insert them in the same transaction. */
export async function allocateChannelIds(db: Db, accountId: number, n: number): Promise<number[]> {
  return db.transaction(async (tx) => {
    await lockAccountChannels(tx, accountId);
    const r = await rows<{ id: number }>(
      tx,
      sql`
      SELECT (COALESCE((SELECT max(id) FROM channels WHERE account_id = ${accountId}), 0) + g)::int AS id
      FROM generate_series(1, ${n}) g`,
    );
    return r.map((x) => x.id);
  });
}

export async function listChannels(db: Db, accountId: number) {
  return rows<{ id: number; name: string; conversation_count: number; response_count: number }>(
    db,
    sql`
    SELECT id, name, conversation_count, response_count FROM channels WHERE account_id = ${accountId} ORDER BY id`,
  );
}

/** Inserts a channel with the account's next number; call it holding lockAccountChannels. */
async function insertNextChannel(tx: Db, accountId: number, name: string): Promise<number> {
  const [row] = await rows<{ id: number }>(
    tx,
    sql`
    INSERT INTO channels (account_id, id, name)
    VALUES (${accountId}, COALESCE((SELECT max(id) FROM channels WHERE account_id = ${accountId}), 0) + 1, ${name})
    RETURNING id`,
  );
  return row!.id;
}

/** A new channel with the account's next number; returns that number. */
export async function insertChannel(db: Db, accountId: number, name: string): Promise<number> {
  return db.transaction(async (tx) => {
    await lockAccountChannels(tx, accountId);
    return insertNextChannel(tx, accountId, name);
  });
}

export async function channelBelongsTo(db: Db, accountId: number, channelId: number): Promise<boolean> {
  const r = await rows<{ id: number }>(db, sql`SELECT id FROM channels WHERE id = ${channelId} AND account_id = ${accountId}`);
  return r.length > 0;
}

/** The account's channel named `name` (the first such), made with the next number when it has none. */
export async function getOrInsertChannelByName(db: Db, accountId: number, name: string): Promise<number> {
  const named = (d: Db) => rows<{ id: number }>(d, sql`SELECT id FROM channels WHERE account_id = ${accountId} AND name = ${name} ORDER BY id LIMIT 1`);
  // Once it exists (every call but the first), one read: the lock and its transaction only to make it.
  const [existing] = await named(db);
  if (existing) return existing.id;
  return db.transaction(async (tx) => {
    await lockAccountChannels(tx, accountId);
    const [found] = await named(tx);
    return found ? found.id : insertNextChannel(tx, accountId, name);
  });
}
