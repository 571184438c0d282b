/**
 * Ranking of knowledge-base passages: BM25 over the account's passages (a word that few passages
 * contain weighs more than one most contain), with the document title and section headings
 * counted as part of each passage, plus a relevance in 0..1 that the relevance floor is applied
 * to: the share of the question's information (the sum of its words' IDF, words no passage
 * contains counting most) that the passage covers. One shared common word ("sell") covers little
 * of a question. A word shared only through the stemmer ("savings" / "saved") is not evidence
 * (sameWord, applied by lib/knowledge/service.ts), and a name the question writes ("Xbox") must be
 * in the passage (writtenNames). Decisions and the tuning: docs/DECISIONS.md, BENCHMARKS.md.
 */
import type { CandidatePassage } from '../../db/queries/knowledge';

/** BM25's usual constants. */
const K1 = 1.2;
const B = 0.75;
/** A word in the passage's title or headings counts this much more than one in its text. */
const CONTEXT_WEIGHT = 2;

/**
 * Question phrasing (stemmed): words that say a question is being asked, not what about
 * ("how much", "how long", "where can I find", "is there any way"). Dropped from the question before ranking;
 * tuned on the evaluation set (BENCHMARKS.md).
 */
export const FILLER = new Set([
  'get',
  'want',
  'need',
  'would',
  'could',
  'pleas',
  'help',
  'know',
  'tell',
  'way',
  'possibl',
  'abl',
  'thank',
  'hi',
  'hello',
  'hey',
  'anyon',
  'someon',
  'someth',
  'anyth',
  'happen',
  'much',
  'mani',
  'long',
  'find',
  'ever',
  'anymor',
  'certain',
  'differ',
  'put',
  'look',
  'take',
  'use',
  'work',
  'one',
  'good',
  'best',
  'like',
  'give',
  'make',
  'go',
  'say',
  'thing',
  'also',
  'still',
  'realli',
  'whi',
  // Stop words as chat spells them (english stop words are dropped before stemming; these are not).
  'u',
  'ur',
  'r',
  'ya',
  'pls',
  'plz',
  'thx',
  'ty',
  'im',
  'ive',
  'dont',
  'cant',
  'wont',
  'didnt',
  'doesnt',
  'isnt',
  'arent',
  'hasnt',
  'havent',
  'what',
  'where',
  'how',
  'whos',
  'that',
  'there',
  'gonna',
  'wanna',
  'lemm',
]);

/**
 * A word no passage contains counts this much of its IDF in the question's information: it may be
 * a paraphrase ("dispatched" for "leave our warehouse") as much as a sign of another topic.
 */
const UNKNOWN_WORD_WEIGHT = 0.3;

/**
 * Passages of an imagined background corpus that contain none of the question's words: in a
 * small knowledge base (one document, a few passages) every word it has would otherwise look
 * common and count less than a word it lacks.
 */
const BACKGROUND_PASSAGES = 20;

/** A question's words with their weight (1 for the question itself, less for earlier turns). */
export type WeightedTerms = Map<string, number>;

export type RankedPassage = Omit<CandidatePassage, 'terms' | 'length'> & {
  /** BM25 score: orders passages; comparable only within one question. */
  score: number;
  /** Share of the question's information this passage covers (0..1); the floor applies to it. */
  relevance: number;
  /** Distinct words of the question the passage contains, and how many the question has. */
  matched: number;
  asked: number;
  /**
   * The question's words found in the passage, each with its share of the question's information
   * and whether the passage is about it (in its title or headings, or twice in its text).
   */
  evidence: Array<{ lexeme: string; share: number; topical: boolean }>;
  /** The names the question writes (writtenNames), each as its words' stems; the same for every passage. */
  names: string[][];
};

/**
 * Whether two written words are evidently one word in two forms, not two words the stemmer happens
 * to map to one stem: equal, or the shorter without its last letter begins the longer ("close" /
 * "closing", "hike" / "hiking", "return" / "returns"), or they share their first five letters
 * ("receive" / "receiving", "authentication" / "authenticator"). Porter stemming over-conflates
 * short stems: "savings" and "saved" both become "save", yet one is a bank's and the other a form's.
 */
export function sameWord(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return true;
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  if (long.startsWith(short.slice(0, -1))) return true;
  let common = 0;
  while (common < short.length && short[common] === long[common]) common++;
  return common >= 5;
}

/**
 * The passage without the evidence of `conflated` words: words of the question that the passage
 * contains only as another word with the same stem (sameWord false for every pair of forms). They
 * still count in the BM25 order (stemming finds paraphrases), not in the relevance decision.
 */
export function withoutConflations(p: RankedPassage, conflated: Set<string>): RankedPassage {
  if (!p.evidence.some((e) => conflated.has(e.lexeme))) return p;
  const evidence = p.evidence.filter((e) => !conflated.has(e.lexeme));
  return { ...p, evidence, matched: evidence.length, relevance: evidence.reduce((s, e) => s + e.share, 0) };
}

/**
 * The relevance floor: a passage answers a question when it covers at least `floor` of the
 * question's information AND contains two of its words (one when the question has one, and then
 * one the passage is about: in its title or headings, or twice in its text): a single shared word
 * in passing ("sell", "wash") is not relevance. The passage must also contain a word of every name
 * the question writes (a question about "an Xbox gift card" is not answered by the shop's own gift
 * cards), and a word that is not a name when the question has one ("Kiel" and "Oslo" say where,
 * not what is asked). Tuned on the evaluation set (docs/DECISIONS.md, BENCHMARKS.md).
 */
export function isRelevant(p: RankedPassage, floor: number): boolean {
  if (p.relevance < floor || p.matched < Math.min(2, p.asked)) return false;
  if (p.matched < 2 && !p.evidence.some((e) => e.topical)) return false;
  const found = new Set(p.evidence.map((e) => e.lexeme));
  if (!p.names.every((name) => name.some((l) => found.has(l)))) return false;
  const named = new Set(p.names.flat());
  return named.size >= p.asked || p.evidence.some((e) => !named.has(e.lexeme));
}

/** Capitalized common words of English: weekday and month names are not names of something else. */
const WEEKDAYS_AND_MONTHS = new Set([
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
]);

/** The last character of text[from, to) that is not a space, quote, bracket, star, bullet or dash; '' when none. */
function lastMark(text: string, from: number, to: number): string {
  for (let i = to - 1; i >= from; i--) {
    const c = text[i]!;
    if (!/[\s"'“”‘’()[\]*•-]/u.test(c)) return c;
  }
  return '';
}

/**
 * Where the text's closed round or square brackets open and close, outermost pairs only, in order.
 * A bracket after ':' or ';' is a face (":(", ";)"), and one never closed opens nothing.
 */
function bracketed(text: string): Array<{ start: number; end: number }> {
  const pairs: Array<{ start: number; end: number }> = [];
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== '(' && c !== '[' && c !== ')' && c !== ']') continue;
    if (i > 0 && (text[i - 1] === ':' || text[i - 1] === ';')) continue;
    if (c === '(' || c === '[') open.push(i);
    else if (open.length > 0) pairs.push({ start: open.pop()!, end: i });
  }
  pairs.sort((a, b) => a.start - b.start);
  const outermost: typeof pairs = [];
  for (const p of pairs) if (p.start > (outermost.at(-1)?.end ?? -1)) outermost.push(p);
  return outermost;
}

/**
 * The names a text writes, each as its lower-cased words: runs of capitalized words (or words in
 * capitals) inside a sentence ("Xbox", "Xbox Live", "Marks & Spencer", "CSS"). Not a sentence's first
 * word, not "I", not weekdays and months; none when most words inside the sentences are
 * capitalized (Title Case or all capitals: the capitals then say nothing). Only a name whose
 * clause has another word that `asks` (a word with a stem of its own): a greeting, a signature or
 * an address ("Hi Anna,", "Best regards, Anna Berg") names no topic. Not a name in brackets: a
 * remark beside the question ("(order NH-48213)", "(asked at SIGTERM)") is not what it asks about.
 */
export function writtenNames(text: string, asks: (word: string) => boolean): string[][] {
  const asides = bracketed(text);
  let aside = 0;
  let prevEnd = -1;
  const tokens = [...text.matchAll(/[\p{L}\p{N}]+(?:[-'’][\p{L}\p{N}]+)*/gu)].map((m) => {
    // What precedes the word, quotes, brackets and spaces skipped: only the gap since the last word is read (linear in the text).
    const mark = lastMark(text, Math.max(prevEnd, 0), m.index);
    const initial = mark === '' ? prevEnd < 0 : /[.!?:;]/.test(mark);
    prevEnd = m.index + m[0].length;
    while (asides[aside] && asides[aside]!.end < m.index) aside++;
    return {
      word: m[0].replace(/['’]s$/i, '').toLowerCase(),
      start: m.index,
      end: m.index + m[0].length,
      initial,
      inBrackets: asides[aside] !== undefined && asides[aside]!.start < m.index,
      capital: /^\p{Lu}/u.test(m[0]) && !/^I(?:['’]\p{L}+)?$/u.test(m[0]),
    };
  });
  const inside = tokens.filter((t) => !t.initial);
  if (2 * inside.filter((t) => t.capital).length > inside.length) return [];
  const isName = (t: (typeof tokens)[number]) => t.capital && !t.initial && !t.inBrackets && !WEEKDAYS_AND_MONTHS.has(t.word);
  const names: Array<{ words: string[]; clause: number }> = [];
  const asking = new Set<number>();
  let clause = 0;
  tokens.forEach((t, i) => {
    const prev = tokens[i - 1];
    if (prev && /[.!?;:,()\n]/.test(text.slice(prev.end, t.start))) clause++;
    if (!isName(t)) {
      if (asks(t.word)) asking.add(clause);
      return;
    }
    // "Xbox Live", "Marks & Spencer": one name; "Kiel to Oslo", "Kiel, Oslo": two.
    if (prev && isName(prev) && /^[\s&]*$/.test(text.slice(prev.end, t.start))) names.at(-1)!.words.push(t.word);
    else names.push({ words: [t.word], clause });
  });
  return names.filter((n) => asking.has(n.clause)).map((n) => n.words);
}

/**
 * `forms` maps a passage's word to the question's word it is another form of ("lost" → "lose"):
 * counted as that one word (one document frequency, one share of the question), not as a second one.
 * `names`: the names the question writes, as stems (carried to isRelevant).
 */
export function rankCandidates(
  terms: WeightedTerms,
  corpus: { passages: number; avgLength: number; candidates: CandidatePassage[] },
  forms: ReadonlyMap<string, string> = new Map(),
  names: string[][] = [],
): RankedPassage[] {
  const n = corpus.passages + BACKGROUND_PASSAGES;
  const avg = corpus.avgLength || 1;
  const df = new Map<string, number>();
  const word = (lexeme: string) => forms.get(lexeme) ?? lexeme;
  /** Each candidate's text and context counts per question word (its forms summed). */
  const counted = corpus.candidates.map((c) => {
    const m = new Map<string, { text: number; context: number }>();
    for (const t of c.terms) {
      const k = word(t.lexeme);
      const had = m.get(k);
      m.set(k, { text: (had?.text ?? 0) + t.text, context: (had?.context ?? 0) + t.context });
    }
    return m;
  });
  for (const m of counted) for (const k of m.keys()) df.set(k, (df.get(k) ?? 0) + 1);
  const idf = (lexeme: string) => {
    const d = df.get(lexeme) ?? 0;
    return Math.log(1 + (n - d + 0.5) / (d + 0.5));
  };
  let information = 0;
  for (const [lexeme, w] of terms) information += w * idf(lexeme) * (df.has(lexeme) ? 1 : UNKNOWN_WORD_WEIGHT);
  if (information <= 0) return [];

  const ranked = corpus.candidates.map((c, k) => {
    let score = 0;
    let covered = 0;
    const evidence: RankedPassage['evidence'] = [];
    for (const [lexeme, t] of counted[k]!) {
      const w = terms.get(lexeme);
      if (!w) continue;
      const tf = t.text + CONTEXT_WEIGHT * t.context;
      if (tf <= 0) continue;
      const i = idf(lexeme);
      score += w * i * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * c.length) / avg)));
      covered += w * i;
      evidence.push({ lexeme, share: (w * i) / information, topical: t.context > 0 || t.text >= 2 });
    }
    const { terms: _t, length: _l, ...rest } = c;
    return { ...rest, score, relevance: covered / information, matched: evidence.length, asked: terms.size, evidence, names };
  });
  return ranked
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || b.relevance - a.relevance || a.document_id.localeCompare(b.document_id) || a.ordinal - b.ordinal);
}
