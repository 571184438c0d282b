import { getDb, openDb } from '../../db/client';
import { findKnowledgeStems, stemWords } from '../../db/queries/knowledge-words';
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
async function commonSynonymStems(): Promise<ListWord[][]> {
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
 * no synonym group of the account has yet, paired with the first word of a built-in group of common
 * support synonyms (lib/knowledge/common-synonyms.ts) that the knowledge base does contain. A word
 * with no such partner gets no suggestion. Only this account's knowledge base and groups are read.
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
  const suggestionFor = (stem: string): SynonymSuggestion | null => {
    if (present.has(stem) || covered.has(stem)) return null;
    for (const g of named(stem)) {
      const word = g.find((w) => w.stems.length === 1 && w.stems[0] === stem)!.word;
      const partner = g.find((w) => w.stems.length > 0 && !w.stems.includes(stem) && w.stems.every((l) => present.has(l)));
      if (partner) return { word, synonym: partner.word };
    }
    return null;
  };
  return groups.map((g) => {
    const out: SynonymSuggestion[] = [];
    for (const stem of g.words) {
      const s = suggestionFor(stem);
      if (s && !out.some((o) => o.word === s.word)) out.push(s);
    }
    return out;
  });
}

/** "Add synonym": the pair becomes a synonym group through the synonyms service, with its validation. */
export async function addSuggestedSynonym(accountId: number, s: SynonymSuggestion) {
  return addSynonymGroup(accountId, `${s.word}, ${s.synonym}`);
}
