import { randomUUID } from 'node:crypto';
import { and, asc, desc, eq, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { kbChunks, kbDocuments, kbSites } from '../schema';
import { preparedRows } from './prepared';

export type NewDocument = {
  filename: string;
  title: string;
  contentType: string;
  size: number;
  conversationId?: string | null;
  attachmentId?: string | null;
  /** A new version of this lineage (the previous current version is superseded in the same transaction). */
  lineageId?: string;
  siteId?: string | null;
  sourceUrl?: string | null;
  contentHash?: string | null;
};

/** Stores a document and its passages; the caller runs it in a transaction. */
export async function insertDocumentWithChunks(db: Db, accountId: number, doc: NewDocument, passages: Array<{ content: string; context: string }>) {
  const id = randomUUID();
  if (doc.lineageId)
    await db
      .update(kbDocuments)
      .set({ supersededAt: sql`now()` })
      .where(and(eq(kbDocuments.accountId, accountId), eq(kbDocuments.lineageId, doc.lineageId), isNull(kbDocuments.supersededAt)));
  const [row] = await db
    .insert(kbDocuments)
    .values({
      id,
      lineageId: doc.lineageId ?? id,
      siteId: doc.siteId ?? null,
      sourceUrl: doc.sourceUrl ?? null,
      contentHash: doc.contentHash ?? null,
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

const documentColumns = {
  id: kbDocuments.id,
  lineageId: kbDocuments.lineageId,
  filename: kbDocuments.filename,
  title: kbDocuments.title,
  contentType: kbDocuments.contentType,
  size: kbDocuments.size,
  chunks: kbDocuments.chunks,
  siteId: kbDocuments.siteId,
  sourceUrl: kbDocuments.sourceUrl,
  createdAt: kbDocuments.createdAt,
  supersededAt: kbDocuments.supersededAt,
};

/** The account's knowledge documents: its own, not its visitors' uploads (those belong to a conversation). */
const knowledgeOf = (accountId: number) => and(eq(kbDocuments.accountId, accountId), isNull(kbDocuments.conversationId));

/** The account's knowledge documents (not visitors' uploads): current versions, or earlier ones. */
export async function listDocuments(db: Db, accountId: number, versions: 'current' | 'previous' = 'current') {
  return db
    .select(documentColumns)
    .from(kbDocuments)
    .where(and(knowledgeOf(accountId), versions === 'current' ? isNull(kbDocuments.supersededAt) : isNotNull(kbDocuments.supersededAt)))
    .orderBy(desc(kbDocuments.createdAt));
}

/** The current uploaded document (not a website page) with this title or file name, if any. */
export async function findCurrentDocumentNamed(db: Db, accountId: number, title: string, filename: string) {
  const [row] = await db
    .select(documentColumns)
    .from(kbDocuments)
    .where(
      and(
        knowledgeOf(accountId),
        isNull(kbDocuments.siteId),
        isNull(kbDocuments.supersededAt),
        or(eq(kbDocuments.filename, filename), and(eq(kbDocuments.title, title), sql`${title} <> ''`)),
      ),
    )
    .orderBy(desc(kbDocuments.createdAt))
    .limit(1);
  return row ?? null;
}

export async function getDocument(db: Db, accountId: number, documentId: string) {
  const [row] = await db
    .select(documentColumns)
    .from(kbDocuments)
    .where(and(knowledgeOf(accountId), eq(kbDocuments.id, documentId)));
  return row ?? null;
}

/** Makes this version the one that answers (its lineage's current version is superseded); false when unknown. */
export async function restoreDocumentVersion(db: Db, accountId: number, documentId: string): Promise<boolean> {
  const doc = await getDocument(db, accountId, documentId);
  if (!doc) return false;
  await db
    .update(kbDocuments)
    .set({ supersededAt: sql`now()` })
    .where(and(eq(kbDocuments.accountId, accountId), eq(kbDocuments.lineageId, doc.lineageId), isNull(kbDocuments.supersededAt)));
  await db
    .update(kbDocuments)
    .set({ supersededAt: null })
    .where(and(eq(kbDocuments.accountId, accountId), eq(kbDocuments.id, documentId)));
  return true;
}

/** A document's passages in reading order. */
export async function listPassages(db: Db, accountId: number, documentId: string) {
  return db
    .select({ ordinal: kbChunks.ordinal, content: kbChunks.content, context: kbChunks.context })
    .from(kbChunks)
    .where(and(eq(kbChunks.accountId, accountId), eq(kbChunks.documentId, documentId)))
    .orderBy(asc(kbChunks.ordinal));
}

/** Deletes a document with all its versions. */
export async function deleteDocument(db: Db, accountId: number, documentId: string): Promise<boolean> {
  const doc = await getDocument(db, accountId, documentId);
  if (!doc) return false;
  await db.delete(kbDocuments).where(and(eq(kbDocuments.accountId, accountId), eq(kbDocuments.lineageId, doc.lineageId)));
  return true;
}

/** The current pages of a website, by address, with their text hashes (what a re-sync compares). */
export async function listSitePages(db: Db, accountId: number, siteId: string) {
  return db
    .select({ id: kbDocuments.id, lineageId: kbDocuments.lineageId, sourceUrl: kbDocuments.sourceUrl, contentHash: kbDocuments.contentHash })
    .from(kbDocuments)
    .where(and(eq(kbDocuments.accountId, accountId), eq(kbDocuments.siteId, siteId), isNull(kbDocuments.supersededAt)));
}

/** Deletes pages of a website (with their versions) by lineage. */
export async function deleteLineages(db: Db, accountId: number, lineageIds: string[]) {
  if (lineageIds.length === 0) return;
  await db.delete(kbDocuments).where(and(eq(kbDocuments.accountId, accountId), inArray(kbDocuments.lineageId, lineageIds)));
}

export type SiteRow = typeof kbSites.$inferSelect;

/** The account's website for this address, created queued when new. */
export async function upsertSite(db: Db, accountId: number, url: string): Promise<SiteRow> {
  await db.insert(kbSites).values({ accountId, url }).onConflictDoNothing();
  const [row] = await db
    .select()
    .from(kbSites)
    .where(and(eq(kbSites.accountId, accountId), eq(kbSites.url, url)));
  return row!;
}

export async function getSite(db: Db, accountId: number, siteId: string): Promise<SiteRow | null> {
  const [row] = await db
    .select()
    .from(kbSites)
    .where(and(eq(kbSites.accountId, accountId), eq(kbSites.id, siteId)));
  return row ?? null;
}

export async function listSites(db: Db, accountId: number): Promise<SiteRow[]> {
  return db.select().from(kbSites).where(eq(kbSites.accountId, accountId)).orderBy(asc(kbSites.createdAt));
}

/**
 * Marks a website's crawl as started unless one is running; a crawl started before `staleBefore`
 * (its process ended mid-crawl) counts as not running. Null when a crawl is running.
 */
export async function claimSiteCrawl(db: Db, accountId: number, siteId: string, staleBefore: Date): Promise<SiteRow | null> {
  const [row] = await db
    .update(kbSites)
    .set({ status: 'crawling', startedAt: sql`now()`, finishedAt: null, error: null })
    .where(and(eq(kbSites.accountId, accountId), eq(kbSites.id, siteId), or(sql`${kbSites.status} <> 'crawling'`, lt(kbSites.startedAt, staleBefore))))
    .returning();
  return row ?? null;
}

export async function updateSiteProgress(db: Db, accountId: number, siteId: string, pages: number) {
  await db
    .update(kbSites)
    .set({ pages })
    .where(and(eq(kbSites.accountId, accountId), eq(kbSites.id, siteId)));
}

export async function finishSiteCrawl(db: Db, accountId: number, siteId: string, outcome: { pages: number; error: string | null }) {
  await db
    .update(kbSites)
    .set({ status: outcome.error ? 'failed' : 'done', pages: outcome.pages, error: outcome.error, finishedAt: sql`now()` })
    .where(and(eq(kbSites.accountId, accountId), eq(kbSites.id, siteId)));
}

/** Deletes a website and its pages. */
export async function deleteSite(db: Db, accountId: number, siteId: string): Promise<boolean> {
  const deleted = await db
    .delete(kbSites)
    .where(and(eq(kbSites.accountId, accountId), eq(kbSites.id, siteId)))
    .returning({ id: kbSites.id });
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
  /** The passage is of a file the visitor attached in this conversation, not of the knowledge base. */
  visitor_file: boolean;
  /** Each asked word in the passage: occurrences in its text and in its title/headings. */
  terms: Array<{ lexeme: string; text: number; context: number }>;
};

/** The documents a question is answered from (alias `d`): the knowledge base's current versions, and the conversation's own uploads. */
export const passageScope = (conversationId: string | null) =>
  sql`${conversationId ? sql`(d.conversation_id IS NULL OR d.conversation_id = ${conversationId})` : sql`d.conversation_id IS NULL`} AND d.superseded_at IS NULL`;

/**
 * Every passage the account (and, with a conversation, the documents uploaded in it) holds that
 * contains any of `lexemes`, plus the passage count and mean length of that scope (one statement:
 * each row carries them, and one row of nulls stands for no match): BM25 needs no more, since a
 * word's document frequency is the number of candidates containing it.
 */
export async function matchPassages(db: Db, accountId: number, conversationId: string | null, lexemes: string[]) {
  if (lexemes.length === 0) return { passages: 0, avgLength: 0, candidates: [] as CandidatePassage[] };
  const scope = passageScope(conversationId);
  // Lexemes quoted as tsquery literals: taken as they are, never re-parsed.
  const query = lexemes.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' | ');
  const wanted = sql.param(lexemes);
  const found = await preparedRows<
    Omit<CandidatePassage, 'terms' | 'document_id'> & { document_id: string | null; terms: CandidatePassage['terms'] | string; n: number; avg_length: number }
  >(
    db,
    sql`
    SELECT s.n, s.avg_length, m.* FROM (
      SELECT count(*)::int AS n, coalesce(avg(length(c.tsv)), 0)::float8 AS avg_length
      FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
      WHERE c.account_id = ${accountId} AND ${scope}) s
    LEFT JOIN LATERAL (
      SELECT c.document_id, d.title, d.filename, c.ordinal, c.content, c.context, length(c.tsv) AS length,
        d.conversation_id IS NOT NULL AS visitor_file,
        (SELECT json_agg(json_build_object('lexeme', u.lexeme,
            'context', cardinality(array_positions(u.weights, 'A')),
            'text', cardinality(u.positions) - cardinality(array_positions(u.weights, 'A'))))
         FROM unnest(c.tsv) u WHERE u.lexeme = ANY(${wanted}::text[])) AS terms
      FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
      WHERE s.n > 0 AND c.account_id = ${accountId} AND ${scope} AND c.tsv @@ ${query}::tsquery) m ON true`,
  );
  const stats = found[0];
  if (!stats || Number(stats.n) === 0) return { passages: 0, avgLength: 0, candidates: [] as CandidatePassage[] };
  const candidates: CandidatePassage[] = found
    .filter((r) => r.document_id !== null)
    .map(({ n: _n, avg_length: _a, ...r }) => ({
      ...r,
      document_id: r.document_id!,
      length: Number(r.length),
      visitor_file: r.visitor_file === true || String(r.visitor_file) === 't',
      terms: typeof r.terms === 'string' ? JSON.parse(r.terms) : (r.terms ?? []),
    }));
  return { passages: Number(stats.n), avgLength: Number(stats.avg_length), candidates };
}

/** What ranking needs of a question's texts: each text's stems, its words' written forms, and the account's synonym groups. */
export type QuestionWords = {
  /** Each text's english stems (stop words dropped), in the order to_tsvector lists them. */
  lexemes: string[][];
  /** Each text's stems with the distinct lower-cased words that stemmed to them. */
  forms: Array<Map<string, Set<string>>>;
  /** The account's synonym groups: each word as its stems (listSynonymStems). */
  synonyms: string[][][];
  /** The version of the account's knowledge-base documents (kb_versions: changes with any upload, removal or restore). */
  vocabularyKey: string;
  /** Its vocabulary (letter-only stems of 4+ letters, each with its number of passages); null when `knownKey` is still current. */
  vocabulary: Map<string, number> | null;
};

/**
 * QuestionWords of `texts` in one statement (ranking reads them for every question). The
 * vocabulary (a scan of every passage) only when the documents' key is not `knownKey`.
 */
export async function readQuestionWords(db: Db, accountId: number, texts: string[], knownKey: string | null): Promise<QuestionWords> {
  const list = sql.param(texts);
  const current = sql`d.account_id = ${accountId} AND d.conversation_id IS NULL AND d.superseded_at IS NULL`;
  const [row] = await preparedRows<{
    lexemes: string[][] | string | null;
    forms: Array<[number, string, string]> | string | null;
    synonyms: string[][][] | string | null;
    vocabulary_key: string;
    vocabulary: Record<string, number> | string | null;
  }>(
    db,
    sql`
    SELECT
      (SELECT json_agg(ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', t.txt)) u) ORDER BY t.n)
       FROM unnest(${list}::text[]) WITH ORDINALITY AS t(txt, n)) AS lexemes,
      (SELECT json_agg(json_build_array(t.n, lower(d.token), l.lexeme))
       FROM unnest(${list}::text[]) WITH ORDINALITY AS t(txt, n), LATERAL ts_debug('english', t.txt) d, LATERAL unnest(d.lexemes) AS l(lexeme)) AS forms,
      (SELECT json_agg((SELECT jsonb_agg(ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', w)) u)) FROM unnest(g.words) w))
       FROM synonym_groups g WHERE g.account_id = ${accountId}) AS synonyms,
      v.key AS vocabulary_key,
      CASE WHEN v.key IS DISTINCT FROM ${knownKey}::text THEN
        (SELECT json_object_agg(w.lexeme, w.n) FROM (
           SELECT u.lexeme, count(*)::int AS n FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id, unnest(c.tsv) u
           WHERE c.account_id = ${accountId} AND ${current} AND length(u.lexeme) >= 4 AND u.lexeme ~ '^[a-z]+$'
           GROUP BY u.lexeme) w)
      END AS vocabulary
    FROM (SELECT coalesce((SELECT version FROM kb_versions WHERE account_id = ${accountId}), 0)::text AS key) v`,
  );
  const json = <T>(v: T | string | null | undefined): T | null => (typeof v === 'string' ? (JSON.parse(v) as T) : (v ?? null));
  const forms = texts.map(() => new Map<string, Set<string>>());
  for (const [n, token, lexeme] of json(row?.forms) ?? []) {
    const m = forms[Number(n) - 1]!;
    const set = m.get(lexeme) ?? new Set<string>();
    set.add(token);
    m.set(lexeme, set);
  }
  const vocabulary = json(row?.vocabulary);
  return {
    lexemes: json(row?.lexemes) ?? texts.map(() => []),
    forms,
    synonyms: json(row?.synonyms) ?? [],
    vocabularyKey: String(row?.vocabulary_key ?? ''),
    vocabulary: row && String(row.vocabulary_key) !== knownKey ? new Map(Object.entries(vocabulary ?? {}).map(([l, n]) => [l, Number(n)])) : null,
  };
}
