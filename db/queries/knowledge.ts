import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { kbChunks, kbDocuments } from '../schema';
import { preparedRows } from './prepared';

export type NewDocument = {
  filename: string;
  title: string;
  contentType: string;
  size: number;
  conversationId?: string | null;
  attachmentId?: string | null;
};

/** Stores a document and its passages; the caller runs it in a transaction. */
export async function insertDocumentWithChunks(db: Db, accountId: number, doc: NewDocument, passages: Array<{ content: string; context: string }>) {
  const [row] = await db
    .insert(kbDocuments)
    .values({
      accountId,
      filename: doc.filename,
      title: doc.title,
      contentType: doc.contentType,
      size: doc.size,
      conversationId: doc.conversationId ?? null,
      attachmentId: doc.attachmentId ?? null,
      chunks: passages.length,
    })
    .returning({ id: kbDocuments.id });
  for (let i = 0; i < passages.length; i += 500) {
    await db.insert(kbChunks).values(
      passages.slice(i, i + 500).map((p, j) => ({
        accountId,
        documentId: row!.id,
        ordinal: i + j,
        content: p.content,
        context: p.context,
      })),
    );
  }
  return { id: row!.id, chunks: passages.length };
}

export async function listDocuments(db: Db, accountId: number) {
  return db
    .select({
      id: kbDocuments.id,
      filename: kbDocuments.filename,
      title: kbDocuments.title,
      contentType: kbDocuments.contentType,
      size: kbDocuments.size,
      chunks: kbDocuments.chunks,
      createdAt: kbDocuments.createdAt,
    })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.accountId, accountId), isNull(kbDocuments.conversationId)))
    .orderBy(desc(kbDocuments.createdAt));
}

export async function deleteDocument(db: Db, accountId: number, documentId: string): Promise<boolean> {
  const deleted = await db
    .delete(kbDocuments)
    .where(and(eq(kbDocuments.id, documentId), eq(kbDocuments.accountId, accountId)))
    .returning({ id: kbDocuments.id });
  return deleted.length > 0;
}

/** The english-stemmed words of a text, stop words dropped, each with its number of occurrences. */
export async function textLexemes(db: Db, text: string): Promise<Array<{ lexeme: string; count: number }>> {
  return preparedRows<{ lexeme: string; count: number }>(
    db,
    sql`
    SELECT u.lexeme, cardinality(u.positions)::int AS count FROM unnest(to_tsvector('english', ${text})) u`,
  );
}

/**
 * The written forms of `lexemes` (null: of every word) in each of `texts`: for every text (by
 * index), each stemmed word with the distinct lower-cased words that the english configuration
 * stemmed to it.
 */
export async function surfaceForms(db: Db, texts: string[], lexemes: string[] | null): Promise<Array<Map<string, Set<string>>>> {
  const out = texts.map(() => new Map<string, Set<string>>());
  if (texts.length === 0 || lexemes?.length === 0) return out;
  const values = sql.join(
    texts.map((t, i) => sql`(${i}::int, ${t}::text)`),
    sql`, `,
  );
  const wanted = lexemes ? sql` WHERE l.lexeme = ANY(${sql.param(lexemes)}::text[])` : sql``;
  const found = await preparedRows<{ n: number; token: string; lexeme: string }>(
    db,
    sql`
    SELECT DISTINCT t.n, lower(d.token) AS token, l.lexeme
    FROM (VALUES ${values}) AS t(n, txt), LATERAL ts_debug('english', t.txt) d, LATERAL unnest(d.lexemes) AS l(lexeme)${wanted}`,
  );
  for (const r of found) {
    const m = out[Number(r.n)]!;
    const set = m.get(r.lexeme) ?? new Set<string>();
    set.add(r.token);
    m.set(r.lexeme, set);
  }
  return out;
}

/** A passage that contains at least one of the asked words, with what ranking needs to score it. */
export type CandidatePassage = {
  document_id: string;
  title: string;
  filename: string;
  ordinal: number;
  content: string;
  /** The document title and headings above the passage (indexed with weight A). */
  context: string;
  /** Distinct words of the passage (its length for BM25). */
  length: number;
  /** Each asked word in the passage: occurrences in its text and in its title/headings. */
  terms: Array<{ lexeme: string; text: number; context: number }>;
};

/**
 * Every passage the account (and, with a conversation, the documents uploaded in it) holds that
 * contains any of `lexemes`, plus the passage count and mean length of that scope: BM25 needs no
 * more, since a word's document frequency is the number of candidates containing it.
 */
/** The documents a question is answered from (alias `d`): the knowledge base, and the conversation's own uploads. */
export const passageScope = (conversationId: string | null) =>
  conversationId ? sql`(d.conversation_id IS NULL OR d.conversation_id = ${conversationId})` : sql`d.conversation_id IS NULL`;

export async function matchPassages(db: Db, accountId: number, conversationId: string | null, lexemes: string[]) {
  const scope = passageScope(conversationId);
  const [stats] = await preparedRows<{ n: number; avg_length: number }>(
    db,
    sql`
    SELECT count(*)::int AS n, coalesce(avg(length(c.tsv)), 0)::float8 AS avg_length
    FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
    WHERE c.account_id = ${accountId} AND ${scope}`,
  );
  if (lexemes.length === 0 || !stats || stats.n === 0) return { passages: 0, avgLength: 0, candidates: [] as CandidatePassage[] };
  // Lexemes quoted as tsquery literals: taken as they are, never re-parsed.
  const query = lexemes.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' | ');
  const wanted = sql.param(lexemes);
  const found = await preparedRows<Omit<CandidatePassage, 'terms'> & { terms: CandidatePassage['terms'] | string }>(
    db,
    sql`
    SELECT c.document_id, d.title, d.filename, c.ordinal, c.content, c.context, length(c.tsv) AS length,
      (SELECT json_agg(json_build_object('lexeme', u.lexeme,
          'context', cardinality(array_positions(u.weights, 'A')),
          'text', cardinality(u.positions) - cardinality(array_positions(u.weights, 'A'))))
       FROM unnest(c.tsv) u WHERE u.lexeme = ANY(${wanted}::text[])) AS terms
    FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
    WHERE c.account_id = ${accountId} AND ${scope} AND c.tsv @@ ${query}::tsquery`,
  );
  const candidates = found.map((r) => ({ ...r, length: Number(r.length), terms: typeof r.terms === 'string' ? JSON.parse(r.terms) : (r.terms ?? []) }));
  return { passages: stats.n, avgLength: Number(stats.avg_length), candidates };
}
