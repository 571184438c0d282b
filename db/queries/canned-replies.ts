import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/** Canned replies (lib/conversations/canned-replies.ts), per account. */

export type CannedReplyRow = { id: string; shortcut: string; text: string; created_at: string; updated_at: string };
const CANNED_COLUMNS = sql`id, shortcut, text, ${utcText(sql`created_at`)} AS created_at, ${utcText(sql`updated_at`)} AS updated_at`;

export async function listCannedReplyRows(db: Db, accountId: number): Promise<CannedReplyRow[]> {
  return rows(db, sql`SELECT ${CANNED_COLUMNS} FROM canned_replies WHERE account_id = ${accountId} ORDER BY shortcut`);
}

/** Null: the shortcut is taken in this account. */
export async function insertCannedReply(db: Db, accountId: number, r: { shortcut: string; text: string }): Promise<CannedReplyRow | null> {
  const [row] = await rows<CannedReplyRow>(
    db,
    sql`
    INSERT INTO canned_replies (account_id, shortcut, text) VALUES (${accountId}, ${r.shortcut}, ${r.text})
    ON CONFLICT (account_id, shortcut) DO NOTHING RETURNING ${CANNED_COLUMNS}`,
  );
  return row ?? null;
}

/** 'missing': no such reply in the account; 'taken': another reply has the shortcut. */
export async function updateCannedReplyRow(
  db: Db,
  accountId: number,
  id: string,
  r: { shortcut: string; text: string },
): Promise<CannedReplyRow | 'missing' | 'taken'> {
  const [clash] = await rows<{ id: string }>(
    db,
    sql`SELECT id FROM canned_replies WHERE account_id = ${accountId} AND shortcut = ${r.shortcut} AND id <> ${id}`,
  );
  if (clash) return 'taken';
  const [row] = await rows<CannedReplyRow>(
    db,
    sql`
    UPDATE canned_replies SET shortcut = ${r.shortcut}, text = ${r.text}, updated_at = now()
    WHERE id = ${id} AND account_id = ${accountId} RETURNING ${CANNED_COLUMNS}`,
  );
  return row ?? 'missing';
}

export async function deleteCannedReplyRow(db: Db, accountId: number, id: string): Promise<boolean> {
  const done = await rows<{ id: string }>(db, sql`DELETE FROM canned_replies WHERE id = ${id} AND account_id = ${accountId} RETURNING id`);
  return done.length > 0;
}
