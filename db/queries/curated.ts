import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

export type CuratedAnswerRow = { id: string; questions: string[]; answer: string; created_at: string };

export async function insertCuratedAnswer(db: Db, accountId: number, questions: string[], answer: string): Promise<string> {
  const [row] = await rows<{ id: string }>(
    db,
    sql`INSERT INTO curated_answers (account_id, questions, answer) VALUES (${accountId}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(questions)}::jsonb)), ${answer}) RETURNING id`,
  );
  return row!.id;
}

export async function listCuratedAnswers(db: Db, accountId: number): Promise<CuratedAnswerRow[]> {
  return rows<CuratedAnswerRow>(
    db,
    sql`SELECT id, questions, answer, ${utcText(sql`g.created_at`)} AS created_at
      FROM curated_answers g WHERE g.account_id = ${accountId} ORDER BY g.created_at, g.id`,
  );
}

/**
 * Every question variant of the account's curated answers with its full-text stems, and the
 * stems of `question` (the same english configuration as the knowledge base's search).
 */
export async function listCuratedVariants(db: Db, accountId: number, question: string) {
  return rows<{ id: string; answer: string; lexemes: string[]; asked: string[] }>(
    db,
    sql`
    SELECT c.id, c.answer, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', v.q)) u) AS lexemes,
      ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', ${question})) u) AS asked
    FROM curated_answers c, unnest(c.questions) v(q)
    WHERE c.account_id = ${accountId}
    ORDER BY c.updated_at DESC, c.id`,
  );
}

export async function updateCuratedAnswer(db: Db, accountId: number, id: string, questions: string[], answer: string): Promise<boolean> {
  const updated = await rows<{ id: string }>(
    db,
    sql`UPDATE curated_answers SET questions = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(questions)}::jsonb)), answer = ${answer}, updated_at = now()
      WHERE account_id = ${accountId} AND id = ${id} RETURNING id`,
  );
  return updated.length > 0;
}

export async function deleteCuratedAnswer(db: Db, accountId: number, id: string): Promise<boolean> {
  const deleted = await rows<{ id: string }>(db, sql`DELETE FROM curated_answers WHERE account_id = ${accountId} AND id = ${id} RETURNING id`);
  return deleted.length > 0;
}
