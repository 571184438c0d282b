import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';

export async function insertUpload(db: Db, accountId: number, v: {
  id: string; clientId: string; visitorId: string; filename: string; contentType: string; size: number; storageName: string;
}) {
  await db.execute(sql`
    INSERT INTO attachments (id, account_id, client_id, visitor_id, filename, content_type, size, storage_name)
    VALUES (${v.id}, ${accountId}, ${v.clientId}, ${v.visitorId}, ${v.filename}, ${v.contentType}, ${v.size}, ${v.storageName})`);
}

export type UploadRow = { id: string; filename: string; content_type: string; size: number; storage_name: string; conversation_id: string | null };

/** Uploads of this visitor, not yet attached elsewhere. */
export async function getVisitorUploads(db: Db, accountId: number, visitorId: string, ids: string[]): Promise<UploadRow[]> {
  if (ids.length === 0) return [];
  return rows<UploadRow>(db, sql`
    SELECT id, filename, content_type, size, storage_name, conversation_id FROM attachments
    WHERE account_id = ${accountId} AND visitor_id = ${visitorId} AND message_id IS NULL
      AND id IN (${sql.join(ids.map((i) => sql`${i}`), sql`, `)})`);
}

export async function attachUploads(db: Db, accountId: number, ids: string[], conversationId: string, messageId: string) {
  if (ids.length === 0) return;
  await db.execute(sql`
    UPDATE attachments SET conversation_id = ${conversationId}, message_id = ${messageId}
    WHERE account_id = ${accountId} AND id IN (${sql.join(ids.map((i) => sql`${i}`), sql`, `)})`);
}

export async function getAttachmentForAccount(db: Db, accountId: number, id: string): Promise<UploadRow | null> {
  const [row] = await rows<UploadRow>(db, sql`
    SELECT id, filename, content_type, size, storage_name, conversation_id FROM attachments WHERE id = ${id} AND account_id = ${accountId}`);
  return row ?? null;
}
