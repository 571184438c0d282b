import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

export type SynonymGroupRow = { id: string; words: string[]; created_at: string };

export async function insertSynonymGroup(db: Db, accountId: number, words: string[]): Promise<string> {
  const [row] = await rows<{ id: string }>(
    db,
    sql`INSERT INTO synonym_groups (account_id, words) VALUES (${accountId}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(words)}::jsonb))) RETURNING id`,
  );
  return row!.id;
}

export async function listSynonymGroups(db: Db, accountId: number): Promise<SynonymGroupRow[]> {
  return rows<SynonymGroupRow>(
    db,
    sql`SELECT id, words, ${utcText(sql`g.created_at`)} AS created_at
      FROM synonym_groups g WHERE g.account_id = ${accountId} ORDER BY g.created_at, g.id`,
  );
}

export async function countSynonymGroups(db: Db, accountId: number): Promise<number> {
  const [row] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM synonym_groups WHERE account_id = ${accountId}`);
  return row!.n;
}

export async function deleteSynonymGroup(db: Db, accountId: number, id: string): Promise<boolean> {
  const deleted = await rows<{ id: string }>(db, sql`DELETE FROM synonym_groups WHERE account_id = ${accountId} AND id = ${id} RETURNING id`);
  return deleted.length > 0;
}

/** Each group's words as full-text stems (one array per word; the knowledge base's english configuration). */
export async function listSynonymStems(db: Db, accountId: number): Promise<string[][][]> {
  const found = await rows<{ stems: string[][] | string }>(
    db,
    sql`
    SELECT (SELECT jsonb_agg(ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', w)) u)) FROM unnest(g.words) w) AS stems
    FROM synonym_groups g WHERE g.account_id = ${accountId}`,
  );
  return found.map((r) => (typeof r.stems === 'string' ? JSON.parse(r.stems) : r.stems) as string[][]);
}
