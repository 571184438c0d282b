import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { passageScope } from './knowledge';

/** A stem as a tsquery literal, taken as it is (never re-parsed or re-stemmed). */
const asQuery = (s: SQL) => sql`('''' || replace(replace(${s}, '\\', '\\\\'), '''', '''''') || '''')::tsquery`;

/**
 * Which of `stems` the account's knowledge base contains: in a passage of a current document (not a
 * visitor's upload; title and headings included) or in a curated answer's questions or answer. Both
 * with the english configuration the search uses. Only this account's rows are read.
 */
export async function findKnowledgeStems(db: Db, accountId: number, stems: string[]): Promise<Set<string>> {
  if (stems.length === 0) return new Set();
  const found = await rows<{ stem: string }>(
    db,
    sql`
    SELECT s.stem FROM unnest(${sql.param(stems)}::text[]) AS s(stem)
    WHERE EXISTS (SELECT 1 FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
        WHERE c.account_id = ${accountId} AND ${passageScope(null)} AND c.tsv @@ ${asQuery(sql`s.stem`)})
      OR EXISTS (SELECT 1 FROM curated_answers a
        WHERE a.account_id = ${accountId} AND to_tsvector('english', array_to_string(a.questions, ' ') || ' ' || a.answer) @@ ${asQuery(sql`s.stem`)})`,
  );
  return new Set(found.map((r) => r.stem));
}

/** The english stems of each word or phrase (stop words dropped), in order. */
export async function stemWords(db: Db, words: string[]): Promise<string[][]> {
  if (words.length === 0) return [];
  const found = await rows<{ n: number; stems: string[] }>(
    db,
    sql`
    SELECT w.n::int AS n, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', w.word)) u ORDER BY u.lexeme) AS stems
    FROM unnest(${sql.param(words)}::text[]) WITH ORDINALITY AS w(word, n)`,
  );
  const out: string[][] = words.map(() => []);
  for (const r of found) out[Number(r.n) - 1] = r.stems;
  return out;
}

/** Stems as a tsquery text, each a quoted literal (never re-parsed), joined by `op`. */
const tsqueryOf = (stems: string[], op: '&' | '|') => stems.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(` ${op} `);

/**
 * For each candidate (a word as its stems), how many of the account's passages (current documents,
 * not visitors' uploads) contain it together with at least one of `context`'s stems.
 */
export async function countPassagesWithBoth(db: Db, accountId: number, candidates: string[][], context: string[]): Promise<number[]> {
  if (candidates.length === 0 || context.length === 0) return candidates.map(() => 0);
  const found = await rows<{ n: number; passages: number }>(
    db,
    sql`
    SELECT q.n::int AS n, (SELECT count(*) FROM kb_chunks c JOIN kb_documents d ON d.id = c.document_id
        WHERE c.account_id = ${accountId} AND ${passageScope(null)} AND c.tsv @@ q.q::tsquery AND c.tsv @@ ${tsqueryOf(context, '|')}::tsquery)::int AS passages
    FROM unnest(${sql.param(candidates.map((c) => tsqueryOf(c, '&')))}::text[]) WITH ORDINALITY AS q(q, n)`,
  );
  const out = candidates.map(() => 0);
  for (const r of found) out[Number(r.n) - 1] = Number(r.passages);
  return out;
}
