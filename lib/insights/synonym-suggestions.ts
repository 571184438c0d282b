import { getDb, openDb } from '../../db/client';
import { countPassagesWithBoth, findKnowledgeStems, stemWords } from '../../db/queries/knowledge-words';
import { listSynonymStems } from '../../db/queries/synonyms';
import { COMMON_SUPPORT_SYNONYMS } from '../knowledge/common-synonyms';
import { FILLER } from '../knowledge/ranking';
import { addSynonymGroup } from '../knowledge/synonyms';
import type { GapGroup } from './gaps';

/** "Add synonym: postage = shipping": `word` is the gap's, `synonym` the knowledge base's. */
export type SynonymSuggestion = { word: string; synonym: string };

type ListWord = { word: string; stems: string[] };
let listStems: Promise<ListWord[][]> | null = null;

/** The built-in list's words with their stems (static data: stemmed once per process). */
export async function commonSynonymStems(): Promise<ListWord[][]> {
  listStems ??= (async () => {
    const words = COMMON_SUPPORT_SYNONYMS.flat();
    const stems = await stemWords(openDb() ?? (await getDb()), words);
    let i = 0;
    return COMMON_SUPPORT_SYNONYMS.map((g) => g.map((word) => ({ word, stems: stems[i++]!.filter((l) => !FILLER.has(l)) })));
  })().catch((e) => {
    listStems = null;
    throw e;
  });
  return listStems;
}

/**
 * Per gap group (same order), the synonyms to offer (docs/decisions/synonyms.md): each topic word of
 * its questions that the account's knowledge base (passages and curated answers) contains nowhere and
 * no synonym group of the account has yet, paired with a word of a built-in group of common support
 * synonyms (lib/knowledge/common-synonyms.ts) that the knowledge base does contain: among several,
 * the one most passages contain together with another word of the questions (ties: list order). A
 * word with no such partner gets no suggestion. Only this account's knowledge base and groups are read.
 */
export async function suggestGapSynonyms(accountId: number, groups: GapGroup[]): Promise<SynonymSuggestion[][]> {
  const asked = new Set(groups.flatMap((g) => g.words));
  if (asked.size === 0) return groups.map(() => []);
  const db = openDb() ?? (await getDb());
  const covered = new Set((await listSynonymStems(db, accountId)).flat(2));
  const list = await commonSynonymStems();
  // The built-in groups that name an asked word, alone (a one-stem word of the list).
  const named = (stem: string) => list.filter((g) => g.some((w) => w.stems.length === 1 && w.stems[0] === stem));
  const uncovered = [...asked].filter((s) => !covered.has(s));
  const partners = new Set(uncovered.flatMap((s) => named(s).flatMap((g) => g.flatMap((w) => w.stems))));
  const present = await findKnowledgeStems(db, accountId, [...new Set([...uncovered, ...partners])]);
  /** The list's partners of a missing word that the knowledge base has, in list order. */
  const candidatesFor = (stem: string): SynonymSuggestion[] => {
    if (present.has(stem) || covered.has(stem)) return [];
    const out: SynonymSuggestion[] = [];
    for (const g of named(stem)) {
      const word = g.find((w) => w.stems.length === 1 && w.stems[0] === stem)!.word;
      for (const w of g)
        if (w.stems.length > 0 && !w.stems.includes(stem) && w.stems.every((l) => present.has(l)) && !out.some((o) => o.synonym === w.word))
          out.push({ word, synonym: w.word });
    }
    return out;
  };
  const stemsOf = new Map(list.flat().map((w) => [w.word, w.stems]));
  return Promise.all(
    groups.map(async (g) => {
      const out: SynonymSuggestion[] = [];
      // The group's words the knowledge base has: a partner found in passages with them is meant.
      const context = g.words.filter((s) => present.has(s));
      for (const stem of g.words) {
        const candidates = candidatesFor(stem);
        if (candidates.length === 0 || out.some((o) => o.word === candidates[0]!.word)) continue;
        let best = candidates[0]!;
        if (candidates.length > 1 && context.length > 0) {
          const together = await countPassagesWithBoth(
            db,
            accountId,
            candidates.map((c) => stemsOf.get(c.synonym)!),
            context,
          );
          best = candidates[together.indexOf(Math.max(...together))]!;
        }
        out.push(best);
      }
      return out;
    }),
  );
}

/** "Add synonym": the pair becomes a synonym group through the synonyms service, with its validation. */
export async function addSuggestedSynonym(accountId: number, s: SynonymSuggestion) {
  return addSynonymGroup(accountId, `${s.word}, ${s.synonym}`);
}
