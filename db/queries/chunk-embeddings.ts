import { and, eq, sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { kbChunkEmbeddings } from '../schema';
import { passageScope, type CandidatePassage } from './knowledge';

/** Knowledge-base passages of the account without an embedding under `model`, oldest documents first. */
export async function listChunksToEmbed(db: Db, accountId: number, model: string, limit: number) {
  return rows<{ id: string; context: string; content: string }>(
    db,
    sql`
    SELECT c.id, c.context, c.content
    FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
    LEFT JOIN kb_chunk_embeddings e ON e.chunk_id = c.id AND e.model = ${model}
    WHERE c.account_id = ${accountId} AND ${passageScope(null)} AND e.chunk_id IS NULL
    ORDER BY d.created_at, c.document_id, c.ordinal
    LIMIT ${limit}`,
  );
}

/** Stores (or replaces) passages' embeddings; a passage deleted meanwhile is skipped. */
export async function storeChunkEmbeddings(db: Db, accountId: number, model: string, items: Array<{ chunkId: string; embedding: number[] }>) {
  for (const item of items) {
    await db.execute(sql`
      INSERT INTO kb_chunk_embeddings (chunk_id, account_id, model, embedding)
      SELECT c.id, ${accountId}, ${model}, ${`{${item.embedding.join(',')}}`}::real[] FROM kb_chunks c
      WHERE c.id = ${item.chunkId} AND c.account_id = ${accountId}
      ON CONFLICT (chunk_id) DO UPDATE SET model = excluded.model, embedding = excluded.embedding, created_at = now()`);
  }
}

/** A passage as ranking reads it (lib/knowledge/ranking.ts), with its embedding instead of its words. */
export type EmbeddedPassage = Omit<CandidatePassage, 'length' | 'terms'> & { embedding: number[] };

/** The account's knowledge-base passages embedded under `model`, with what ranking needs of them. */
export async function listEmbeddedPassages(db: Db, accountId: number, model: string, limit: number): Promise<EmbeddedPassage[]> {
  const found = await rows<EmbeddedPassage>(
    db,
    sql`
    SELECT c.document_id, d.title, d.filename, c.ordinal, c.content, c.context, false AS visitor_file, e.embedding
    FROM kb_chunk_embeddings e JOIN kb_chunks c ON c.id = e.chunk_id JOIN kb_documents d ON d.id = c.document_id
    WHERE e.account_id = ${accountId} AND e.model = ${model} AND ${passageScope(null)}
    LIMIT ${limit}`,
  );
  return found.map((r) => ({ ...r, embedding: (r.embedding as unknown as Array<number | string>).map(Number) }));
}

/** How many of the account's passages are embedded under `model`. */
export async function countChunkEmbeddings(db: Db, accountId: number, model: string): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(kbChunkEmbeddings)
    .where(and(eq(kbChunkEmbeddings.accountId, accountId), eq(kbChunkEmbeddings.model, model)));
  return Number(row?.n ?? 0);
}
