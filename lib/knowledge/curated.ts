import { getDb, openDb } from '../../db/client';
import { deleteCuratedAnswer, insertCuratedAnswer, listCuratedAnswers, listCuratedVariants, updateCuratedAnswer } from '../../db/queries/curated';
import { AppError } from '../core/errors';
import { isUuid } from '../core/validation';
import { FILLER } from './ranking';

/** The words that say what was asked: a question's full-text stems without question phrasing. */
export function topicWords(lexemes: string[]): Set<string> {
  return new Set(lexemes.filter((l) => !FILLER.has(l)));
}

/**
 * Two questions ask the same thing when at least half the words of the shorter one are in the
 * other (overlap coefficient ≥ 0.5) and they share a word: "shipping to Canada?" and "Can you
 * ship my order to Canada?" do; "Do you ship to Canada?" and "Can I return a used item?" do not.
 */
export function similarQuestions(a: Set<string>, b: Set<string>): boolean {
  return overlap(a, b) >= 0.5;
}

function overlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / Math.min(a.size, b.size);
}

/** The share of `a`'s words that are in `b`. */
function share(a: Set<string>, b: Set<string>): number {
  if (a.size === 0) return 0;
  let shared = 0;
  for (const w of a) if (b.has(w)) shared++;
  return shared / a.size;
}

export const CURATED_LIMITS = { questions: 50, questionChars: 500, answerChars: 8_000 };

/** The variants (trimmed, distinct, at most 50) and the answer of a curated entry, or the field that is wrong. */
function checkedCurated(input: { questions: string[]; answer: string }) {
  const questions = [...new Set(input.questions.map((q) => q.trim()).filter(Boolean))].slice(0, CURATED_LIMITS.questions);
  const answer = input.answer.trim();
  if (questions.length === 0) throw new AppError('invalid_request', 'questions: give at least one question.');
  if (questions.some((q) => q.length > CURATED_LIMITS.questionChars))
    throw new AppError('invalid_request', `questions: each at most ${CURATED_LIMITS.questionChars} characters.`);
  if (!answer) throw new AppError('invalid_request', 'Answer: write the answer the bot should give.');
  if (answer.length > CURATED_LIMITS.answerChars) throw new AppError('invalid_request', `Answer: at most ${CURATED_LIMITS.answerChars} characters.`);
  return { questions, answer };
}

/** Adds a curated entry: the question variants it answers and the answer (Markdown). */
export async function addCuratedAnswer(accountId: number, input: { questions: string[]; answer: string }) {
  const { questions, answer } = checkedCurated(input);
  return { id: await insertCuratedAnswer(await getDb(), accountId, questions, answer), questions };
}

/** Replaces a curated entry's variants and answer (the same rules as adding). */
export async function editCuratedAnswer(accountId: number, id: string, input: { questions: string[]; answer: string }) {
  const { questions, answer } = checkedCurated(input);
  if (!isUuid(id) || !(await updateCuratedAnswer(await getDb(), accountId, id, questions, answer))) throw new AppError('not_found', `No curated answer ${id}.`);
  return { id, questions };
}

export async function removeCuratedAnswer(accountId: number, id: string) {
  if (!isUuid(id) || !(await deleteCuratedAnswer(await getDb(), accountId, id))) throw new AppError('not_found', `No curated answer ${id}.`);
  return { id, deleted: true };
}

export async function getCuratedAnswers(accountId: number) {
  return listCuratedAnswers(await getDb(), accountId);
}

/** The curated answer for a question, when one of its variants asks the same thing (the best overlap wins; ties: the newest). */
export async function findCuratedAnswer(accountId: number, question: string): Promise<{ id: string; answer: string } | null> {
  const variants = await listCuratedVariants(openDb() ?? (await getDb()), accountId, question);
  if (variants.length === 0) return null;
  const asked = topicWords(variants[0]!.asked);
  let best: { id: string; answer: string; score: number } | null = null;
  for (const v of variants) {
    const words = topicWords(v.lexemes);
    // Both ways: a one-word question ("Where are your stores?") is not a variant that says more ("Can I bring my dog into the store?").
    const score = Math.min(overlap(asked, words), share(words, asked));
    if (score >= 0.5 && (!best || score > best.score)) best = { id: v.id, answer: v.answer, score };
  }
  return best && { id: best.id, answer: best.answer };
}
