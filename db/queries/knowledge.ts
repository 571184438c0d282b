import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { kbChunks, kbDocuments } from '../schema';

export type NewDocument = {
  filename: string; contentType: string; size: number; conversationId?: string | null; attachmentId?: string | null;
};

/** Stores a document and its passages; the caller runs it in a transaction. */
export async function insertDocumentWithChunks(db: Db, accountId: number, doc: NewDocument, passages: string[]) {
  const [row] = await db.insert(kbDocuments).values({
    accountId, filename: doc.filename, contentType: doc.contentType, size: doc.size,
    conversationId: doc.conversationId ?? null, attachmentId: doc.attachmentId ?? null, chunks: passages.length,
  }).returning({ id: kbDocuments.id });
  for (let i = 0; i < passages.length; i += 500) {
    await db.insert(kbChunks).values(passages.slice(i, i + 500).map((content, j) => ({
      accountId, documentId: row!.id, ordinal: i + j, content,
    })));
  }
  return { id: row!.id, chunks: passages.length };
}

export async function listDocuments(db: Db, accountId: number) {
  return db.select({ id: kbDocuments.id, filename: kbDocuments.filename, contentType: kbDocuments.contentType,
    size: kbDocuments.size, chunks: kbDocuments.chunks, createdAt: kbDocuments.createdAt })
    .from(kbDocuments).where(and(eq(kbDocuments.accountId, accountId), isNull(kbDocuments.conversationId)))
    .orderBy(desc(kbDocuments.createdAt));
}

export async function deleteDocument(db: Db, accountId: number, documentId: string): Promise<boolean> {
  const deleted = await db.delete(kbDocuments)
    .where(and(eq(kbDocuments.id, documentId), eq(kbDocuments.accountId, accountId))).returning({ id: kbDocuments.id });
  return deleted.length > 0;
}

export type Passage = { document_id: string; filename: string; ordinal: number; content: string; rank: number };

/**
 * The best passages for a question: full-text match of ANY of its words (stemmed, stop words
 * dropped), ranked. Account documents plus the documents uploaded in this conversation.
 */
export async function searchPassages(db: Db, accountId: number, conversationId: string | null, question: string, limit: number): Promise<Passage[]> {
  const conversationCond = conversationId
    ? sql`(d.conversation_id IS NULL OR d.conversation_id = ${conversationId})`
    : sql`d.conversation_id IS NULL`;
  return rows<Passage>(db, sql`
    WITH q AS (
      SELECT to_tsquery('english', replace(plainto_tsquery('english', ${question})::text, ' & ', ' | ')) AS query
      WHERE plainto_tsquery('english', ${question})::text <> ''
    )
    SELECT c.document_id, d.filename, c.ordinal, c.content, ts_rank(c.tsv, q.query)::float8 AS rank
    FROM q, kb_chunks c JOIN kb_documents d ON d.id = c.document_id
    WHERE c.account_id = ${accountId} AND ${conversationCond} AND c.tsv @@ q.query
    ORDER BY rank DESC, c.document_id, c.ordinal
    LIMIT ${limit}`);
}
