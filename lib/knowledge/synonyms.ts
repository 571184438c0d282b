import { getDb } from '../../db/client';
import { countSynonymGroups, deleteSynonymGroup, insertSynonymGroup, listSynonymGroups } from '../../db/queries/synonyms';
import { textLexemes } from '../../db/queries/knowledge';
import { AppError } from '../core/errors';
import { isUuid } from '../core/validation';
import { FILLER, type WeightedTerms } from './ranking';

export const SYNONYM_LIMITS = { minWords: 2, maxWords: 10, wordChars: 40, phraseWords: 3, groups: 200 };

/** A word or a short phrase: letters, digits, apostrophes and hyphens, at most three words. */
const WORD = /^[\p{L}\p{N}][\p{L}\p{N}'’-]*( [\p{L}\p{N}][\p{L}\p{N}'’-]*){0,2}$/u;

/** Adds one group from "postage, shipping" (comma-separated words or short phrases). */
export async function addSynonymGroup(accountId: number, text: string) {
  const words: string[] = [];
  for (const raw of text.split(',')) {
    const w = raw.trim().replace(/\s+/g, ' ').toLowerCase();
    if (w && !words.includes(w)) words.push(w);
  }
  const { minWords, maxWords, wordChars, groups } = SYNONYM_LIMITS;
  if (words.length < minWords) throw new AppError('invalid_request', 'Words: give at least two different words, separated by commas (e.g. postage, shipping).');
  if (words.length > maxWords) throw new AppError('invalid_request', `Words: at most ${maxWords} words in one group.`);
  const bad = words.find((w) => w.length > wordChars || !WORD.test(w));
  if (bad)
    throw new AppError(
      'invalid_request',
      `Words: “${bad}” is not a word or a short phrase (at most three words of letters and digits, ${wordChars} characters).`,
    );
  const db = await getDb();
  for (const w of words) {
    const stems = (await textLexemes(db, w)).filter((l) => !FILLER.has(l.lexeme));
    if (stems.length === 0) throw new AppError('invalid_request', `Words: “${w}” is too common a word to search for.`);
  }
  if ((await countSynonymGroups(db, accountId)) >= groups)
    throw new AppError('invalid_request', `Words: at most ${groups} synonym groups per account; remove one first.`);
  return { id: await insertSynonymGroup(db, accountId, words), words };
}

export async function getSynonymGroups(accountId: number) {
  return listSynonymGroups(await getDb(), accountId);
}

export async function removeSynonymGroup(accountId: number, id: string) {
  if (!isUuid(id) || !(await deleteSynonymGroup(await getDb(), accountId, id))) throw new AppError('not_found', `No synonym group ${id}.`);
  return { id, deleted: true };
}

/**
 * Adds to a question's terms the words of every synonym group it uses (a word of a group is used
 * when all its stems are among the terms), at the weight of the word used. Returns each used group's words
 * as stem lists, for dropping the absent ones once the knowledge base's words are known.
 */
export function expandWithSynonyms(terms: WeightedTerms, groups: string[][][]): string[][][] {
  const used: string[][][] = [];
  for (const group of groups) {
    const words = group.map((w) => w.filter((l) => !FILLER.has(l))).filter((w) => w.length > 0);
    const hits = words.filter((w) => w.every((l) => terms.has(l)));
    if (hits.length === 0) continue;
    const weight = Math.max(...hits.flatMap((w) => w.map((l) => terms.get(l)!)));
    for (const w of words) for (const l of w) terms.set(l, Math.max(terms.get(l) ?? 0, weight));
    used.push(words);
  }
  return used;
}

/**
 * Removes the words of a used group that no passage contains when another word of the group is in
 * the knowledge base: the question's "postage" then costs nothing when the passages say "shipping"
 * (a word no passage contains otherwise counts most against relevance, lib/knowledge/ranking.ts).
 */
export function dropAbsentSynonyms(terms: WeightedTerms, used: string[][][], present: Set<string>) {
  for (const words of used) {
    const inBase = words.filter((w) => w.every((l) => present.has(l)));
    if (inBase.length === 0) continue;
    for (const w of words) if (!inBase.includes(w)) for (const l of w) if (!present.has(l) && !inBase.some((b) => b.includes(l))) terms.delete(l);
  }
}
