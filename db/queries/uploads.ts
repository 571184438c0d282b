import { and, eq, sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { attachments, uploadChunks } from '../schema';

/** Advisory-lock namespace of an account's upload quota (the second key is the account id). */
const QUOTA_LOCK = 0x55706c64;

export type NewUpload = { id: string; clientId: string; visitorId: string; filename: string; reserveBytes: number };

/**
 * Starts an upload as 'receiving', reserving `reserveBytes` of the account's quota. The check and
 * the insert run under the account's advisory lock, so concurrent uploads (on any instance) never
 * overshoot the quota together. Returns the bytes in use when the reservation does not fit.
 */
export async function reserveUpload(
  db: Db,
  accountId: number,
  v: NewUpload,
  quotaBytes: number,
): Promise<{ reserved: true } | { reserved: false; usedBytes: number }> {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${QUOTA_LOCK}, ${accountId})`);
    const usedBytes = await accountUploadBytes(tx, accountId);
    if (usedBytes + v.reserveBytes > quotaBytes) return { reserved: false as const, usedBytes };
    await tx.insert(attachments).values({
      id: v.id,
      accountId,
      clientId: v.clientId,
      visitorId: v.visitorId,
      filename: v.filename,
      contentType: 'application/octet-stream',
      size: v.reserveBytes,
      status: 'receiving',
    });
    return { reserved: true as const };
  });
}

/**
 * A whole file stored as a complete upload of the visitor (not attached yet) in ONE transaction,
 * row and chunks, under the account's quota lock (as reserveUpload). The id is the caller's: when
 * the account has that upload already (stored before a crash), it is returned as it is and nothing
 * is charged again. Returns the bytes in use when the file does not fit the quota.
 */
export async function insertUploadOnce(
  db: Db,
  accountId: number,
  v: { id: string; visitorId: string; filename: string; contentType: string; chunks: Uint8Array[] },
  quotaBytes: number,
): Promise<{ upload: UploadRow } | { usedBytes: number }> {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${QUOTA_LOCK}, ${accountId})`);
    const [stored] = await rows<UploadRow>(
      tx,
      sql`SELECT id, filename, content_type, size, conversation_id FROM attachments WHERE id = ${v.id} AND account_id = ${accountId}`,
    );
    if (stored) return { upload: stored };
    const size = v.chunks.reduce((n, c) => n + c.byteLength, 0);
    const usedBytes = await accountUploadBytes(tx, accountId);
    if (usedBytes + size > quotaBytes) return { usedBytes };
    await tx.insert(attachments).values({ id: v.id, accountId, visitorId: v.visitorId, filename: v.filename, contentType: v.contentType, size });
    for (const [seq, chunk] of v.chunks.entries()) await insertUploadChunk(tx, v.id, seq, chunk);
    return { upload: { id: v.id, filename: v.filename, content_type: v.contentType, size, conversation_id: null } };
  });
}

/** Bytes the account's uploads hold or have reserved. */
export async function accountUploadBytes(db: Db, accountId: number): Promise<number> {
  const [row] = await rows<{ bytes: string | number }>(
    db,
    sql`SELECT coalesce(sum(size), 0)::bigint AS bytes FROM attachments WHERE account_id = ${accountId}`,
  );
  return Number(row?.bytes ?? 0);
}

/*
 * Chunk bytes cross the driver as base64 text, decoded and encoded by the database itself:
 * PGlite's JavaScript bytea codec moves about 1 MB/s, base64 through decode()/encode() 7–20 MB/s
 * (measured), and postgres-js would otherwise send bytea as hex, half again as large.
 */
export async function insertUploadChunk(db: Db, uploadId: string, seq: number, data: Uint8Array): Promise<void> {
  const base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  await db.execute(sql`INSERT INTO upload_chunks (upload_id, seq, data) VALUES (${uploadId}, ${seq}, decode(${base64}, 'base64'))`);
}

/**
 * A complete file attached to a message of a conversation of the account, stored in ONE
 * transaction (row and chunks), for files that do not stream in through the widget (the demo's).
 */
export async function insertAttachedFile(
  db: Db,
  accountId: number,
  v: {
    conversationId: string;
    messageId: string;
    filename: string;
    contentType: string;
    chunks: Uint8Array[];
  },
): Promise<string> {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const size = v.chunks.reduce((n, c) => n + c.byteLength, 0);
    const [row] = await tx
      .insert(attachments)
      .values({
        accountId,
        conversationId: v.conversationId,
        messageId: v.messageId,
        filename: v.filename,
        contentType: v.contentType,
        size,
      })
      .returning({ id: attachments.id });
    for (const [seq, chunk] of v.chunks.entries()) await insertUploadChunk(tx, row!.id, seq, chunk);
    return row!.id;
  });
}

/** The upload's bytes are all stored: it becomes visible (attachable, downloadable). */
export async function completeUpload(db: Db, accountId: number, id: string, v: { filename: string; contentType: string; size: number }): Promise<void> {
  await db
    .update(attachments)
    .set({ filename: v.filename, contentType: v.contentType, size: v.size, status: 'complete' })
    .where(and(eq(attachments.id, id), eq(attachments.accountId, accountId)));
}

/** Removes an upload and (by cascade) its chunks: nothing of a refused upload stays behind. */
export async function deleteUpload(db: Db, accountId: number, id: string): Promise<void> {
  await db.delete(attachments).where(and(eq(attachments.id, id), eq(attachments.accountId, accountId)));
}

/** Chunk `seq` of an upload of this account, or null past the last one. */
export async function getUploadChunk(db: Db, accountId: number, uploadId: string, seq: number): Promise<Uint8Array | null> {
  const [row] = await rows<{ data: string }>(
    db,
    sql`
    SELECT encode(c.data, 'base64') AS data FROM upload_chunks c JOIN attachments a ON a.id = c.upload_id
    WHERE a.account_id = ${accountId} AND c.upload_id = ${uploadId} AND c.seq = ${seq}`,
  );
  return row ? Buffer.from(row.data, 'base64') : null;
}

export type UploadRow = { id: string; filename: string; content_type: string; size: number; conversation_id: string | null };

/** Complete uploads of this visitor, not yet attached elsewhere. */
export async function getVisitorUploads(db: Db, accountId: number, visitorId: string, ids: string[]): Promise<UploadRow[]> {
  if (ids.length === 0) return [];
  return rows<UploadRow>(
    db,
    sql`
    SELECT id, filename, content_type, size, conversation_id FROM attachments
    WHERE account_id = ${accountId} AND visitor_id = ${visitorId} AND message_id IS NULL AND status = 'complete'
      AND id IN (${sql.join(
        ids.map((i) => sql`${i}`),
        sql`, `,
      )})`,
  );
}

export async function attachUploads(db: Db, accountId: number, ids: string[], conversationId: string, messageId: string) {
  if (ids.length === 0) return;
  await db.execute(sql`
    UPDATE attachments SET conversation_id = ${conversationId}, message_id = ${messageId}
    WHERE account_id = ${accountId} AND id IN (${sql.join(
      ids.map((i) => sql`${i}`),
      sql`, `,
    )})`);
}

export async function getAttachmentForAccount(db: Db, accountId: number, id: string): Promise<UploadRow | null> {
  const [row] = await rows<UploadRow>(
    db,
    sql`
    SELECT id, filename, content_type, size, conversation_id FROM attachments
    WHERE id = ${id} AND account_id = ${accountId} AND status = 'complete'`,
  );
  return row ?? null;
}

/** Documents already indexed from visitor attachments in this conversation. */
export async function countAttachmentDocuments(db: Db, accountId: number, conversationId: string): Promise<number> {
  const [row] = await rows<{ n: number }>(
    db,
    sql`
    SELECT count(*)::int AS n FROM kb_documents
    WHERE account_id = ${accountId} AND conversation_id = ${conversationId} AND attachment_id IS NOT NULL`,
  );
  return row?.n ?? 0;
}

/**
 * Deletes, a batch at a time, uploads never attached that are older than `unattachedBefore`
 * and uploads still 'receiving' since before `receivingBefore` (their process died). Rows another
 * instance is deleting at the same moment are skipped (SKIP LOCKED), so every instance may run it.
 * A service-wide maintenance query: it spans all accounts on purpose.
 */
export async function deleteStaleUploads(db: Db, unattachedBefore: Date, receivingBefore: Date, batch: number): Promise<number> {
  const deleted = await rows<{ id: string }>(
    db,
    sql`
    DELETE FROM attachments WHERE id IN (
      SELECT id FROM attachments
      WHERE message_id IS NULL
        AND (created_at < ${unattachedBefore.toISOString()}::timestamptz OR (status = 'receiving' AND created_at < ${receivingBefore.toISOString()}::timestamptz))
      ORDER BY created_at LIMIT ${batch}
      FOR UPDATE SKIP LOCKED)
    RETURNING id`,
  );
  return deleted.length;
}

export type DiskUpload = { id: string; account_id: number; storage_name: string };

/** Uploads whose bytes are still in a local DATA_DIR/uploads file (stored before uploads moved into the database). */
export async function listDiskUploads(db: Db, limit: number): Promise<DiskUpload[]> {
  return rows<DiskUpload>(
    db,
    sql`
    SELECT id, account_id, storage_name FROM attachments WHERE storage_name IS NOT NULL ORDER BY created_at, id LIMIT ${limit}`,
  );
}

/**
 * Moves one disk upload into upload_chunks in ONE transaction: the row is locked, any chunks of
 * an earlier interrupted attempt are replaced, and storage_name is cleared only with the bytes in
 * place. `readChunks` yields the file's bytes. Returns false when another process moved it first.
 */
export async function moveDiskUploadIntoDatabase(db: Db, upload: DiskUpload, readChunks: () => AsyncIterable<Uint8Array>): Promise<boolean> {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const [locked] = await rows<{ id: string }>(
      tx,
      sql`
      SELECT id FROM attachments WHERE id = ${upload.id} AND account_id = ${upload.account_id} AND storage_name IS NOT NULL FOR UPDATE`,
    );
    if (!locked) return false;
    await tx.delete(uploadChunks).where(eq(uploadChunks.uploadId, upload.id));
    let seq = 0;
    let size = 0;
    for await (const chunk of readChunks()) {
      await insertUploadChunk(tx, upload.id, seq++, chunk);
      size += chunk.length;
    }
    await tx
      .update(attachments)
      .set({ storageName: null, status: 'complete', size })
      .where(and(eq(attachments.id, upload.id), eq(attachments.accountId, upload.account_id)));
    return true;
  });
}

/** What the account's uploads occupy in the database (operators' view and the hostile-input tests). */
export async function getUploadStorage(db: Db, accountId: number): Promise<{ uploads: number; chunks: number; chunkBytes: number }> {
  const [row] = await rows<{ uploads: number; chunks: number; chunk_bytes: string | number }>(
    db,
    sql`
    SELECT (SELECT count(*)::int FROM attachments WHERE account_id = ${accountId}) AS uploads,
           count(c.seq)::int AS chunks, coalesce(sum(octet_length(c.data)), 0)::bigint AS chunk_bytes
    FROM attachments a JOIN upload_chunks c ON c.upload_id = a.id WHERE a.account_id = ${accountId}`,
  );
  return { uploads: row?.uploads ?? 0, chunks: row?.chunks ?? 0, chunkBytes: Number(row?.chunk_bytes ?? 0) };
}
