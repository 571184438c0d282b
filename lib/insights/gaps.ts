import { getDb, openDb } from '../../db/client';
import { dismissGapQuestions, listGapQuestions, type GapRow } from '../../db/queries/insights';
import { listSynonymStems } from '../../db/queries/synonyms';
import { addCuratedAnswer, topicWords } from '../knowledge/curated';
import { FILLER } from '../knowledge/ranking';
import { commonSynonymStems } from './synonym-suggestions';
import { AppError } from '../core/errors';
import type { InsightsQuery } from './contract';

/** At most this many failed questions are read per request (the newest; the page says so when it reached it). */
export const GAP_QUESTIONS_LIMIT = 4_000;
/** The page shows this many groups (most conversations first); the rest are counted. */
export const GAP_GROUPS_SHOWN = 100;
/** Comparison words kept per question (its rarest): a pasted page compares like a question. */
const WORDS_PER_QUESTION = 24;
/** A word in more distinct questions than this proposes no pairs (it would make the index quadratic again); it still weighs in a comparison. */
const COMMON_WORD_QUESTIONS = 256;

export type GapGroup = {
  /** The group's most asked wording (ties: the newest). */
  question: string;
  questions: Array<{ text: string; count: number }>;
  conversations: number;
  reasons: { declined: number; disliked: number; handed_off: number };
  /** A member's reply in one of its handed-off conversations: the draft answer. */
  draft: string | null;
  latest: string;
  /** The topic stems of its questions (what synonym suggestions look for in the knowledge base). */
  words: string[];
};

/**
 * Synonym groups as stem lists per word (lib/knowledge/synonyms.ts), in order: each word maps to the
 * first word of the first group that has it (no chaining: "billing" is not "invoice" because "bill"
 * is in both lists); an account's group with a word the common list has maps its other words there.
 */
function synonymMap(common: string[][][], account: string[][][]) {
  const canonical = new Map<string, string>();
  const entries = new Map<string, string[][]>();
  for (const [i, group] of [...common, ...account].entries()) {
    const words = group.map((w) => w.filter((l) => !FILLER.has(l))).filter((w) => w.length > 0);
    if (words.length === 0) continue;
    const joined = i >= common.length ? words.map((w) => canonical.get(w.join(' '))).find((c) => c !== undefined) : undefined;
    const to = joined ?? words[0]!.join(' ');
    for (const w of words) {
      const key = w.join(' ');
      if (canonical.has(key)) continue;
      canonical.set(key, to);
      entries.set(w[0]!, [...(entries.get(w[0]!) ?? []), w]);
    }
  }
  const root = (key: string) => canonical.get(key)!;
  /** The question's stems with each synonym word (all its stems present) replaced by its group's word's stems. */
  return (stems: Set<string>): Set<string> => {
    const out = new Set(stems);
    for (const s of stems)
      for (const w of entries.get(s) ?? [])
        if (w.every((l) => stems.has(l))) {
          for (const l of w) out.delete(l);
          for (const l of root(w.join(' ')).split(' ')) out.add(l);
        }
    return out;
  };
}

/**
 * Groups are the connected questions (union–find): two questions are connected when the words they
 * share carry more than half the weight of the lighter one's words, each word weighted by its rarity
 * among the window's questions (log(1 + n/df)), after each synonym (the account's groups and the
 * common list) is replaced by its group's first word, so "shop" and "store" are one word and a shared
 * rare "Paris" connects while a shared common "store" does not. A pair is compared only when it shares
 * one of the lighter question's rarest words that carry over half its weight, through an inverted
 * index that skips common words (so questions made only of common words group only with the same
 * words), each distinct word set once; `stats.compared`
 * counts the comparisons (the tests' measure that this stays far below n²/2).
 */
export function groupGapQuestions(
  rows: GapRow[],
  opts: { synonyms?: { common: string[][][]; account: string[][][] }; stats?: { compared: number } } = {},
): GapGroup[] {
  const normalise = synonymMap(opts.synonyms?.common ?? [], opts.synonyms?.account ?? []);
  const all = rows.map((r) => normalise(topicWords(r.lexemes)));
  const df = new Map<string, number>();
  for (const ws of all) for (const w of ws) df.set(w, (df.get(w) ?? 0) + 1);
  const weight = (w: string) => Math.log(1 + rows.length / df.get(w)!);
  // One node per distinct word set (repeated questions cost one comparison), its rarest words kept.
  const nodeOf = new Map<string, number>();
  const nodes: Array<{ words: Set<string>; mass: number }> = [];
  const rowNode = all.map((ws) => {
    const kept = [...ws].sort((a, b) => df.get(a)! - df.get(b)! || (a < b ? -1 : 1)).slice(0, WORDS_PER_QUESTION);
    const key = kept.join('\u0000');
    let n = nodeOf.get(key);
    if (n === undefined) {
      n = nodes.length;
      nodeOf.set(key, n);
      nodes.push({ words: new Set(kept), mass: kept.reduce((m, w) => m + weight(w), 0) });
    }
    return n;
  });
  const postings = new Map<string, number[]>();
  for (const [i, n] of nodes.entries()) for (const w of n.words) postings.set(w, [...(postings.get(w) ?? []), i].slice(0, COMMON_WORD_QUESTIONS + 1));
  const connected = (a: (typeof nodes)[number], b: (typeof nodes)[number]) => {
    let shared = 0;
    for (const w of a.words) if (b.words.has(w)) shared += weight(w);
    return shared > 0.5 * Math.min(a.mass, b.mass) + 1e-9;
  };
  const parent = nodes.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  // A pair can connect only through the lighter one's rarest words that carry over half its weight (its prefix).
  const lighter = (i: number, j: number) => nodes[i]!.mass < nodes[j]!.mass || (nodes[i]!.mass === nodes[j]!.mass && i < j);
  const seen = new Int32Array(nodes.length).fill(-1);
  let compared = 0;
  for (const [i, n] of nodes.entries()) {
    let rest = n.mass;
    for (const w of n.words) {
      if (rest <= 0.5 * n.mass + 1e-9) break;
      rest -= weight(w);
      const list = postings.get(w)!;
      if (list.length > COMMON_WORD_QUESTIONS) continue;
      for (const j of list) {
        if (j === i || seen[j] === i || !lighter(i, j)) continue;
        seen[j] = i;
        if (root(i) === root(j)) continue;
        compared++;
        if (connected(n, nodes[j]!)) parent[root(j)] = root(i);
      }
    }
  }
  if (opts.stats) opts.stats.compared = compared;
  const members = new Map<number, GapRow[]>();
  for (const [i, r] of rows.entries()) {
    const k = root(rowNode[i]!);
    const list = members.get(k);
    if (list) list.push(r);
    else members.set(k, [r]);
  }
  const groups = [...members.values()].map((rs): GapGroup => {
    const counts = new Map<string, { text: string; count: number; latest: string }>();
    for (const r of rs) {
      const key = r.question.trim().toLowerCase();
      const c = counts.get(key) ?? { text: r.question.trim(), count: 0, latest: r.at };
      c.count++;
      if (r.at > c.latest) c.latest = r.at;
      counts.set(key, c);
    }
    const questions = [...counts.values()].sort((a, b) => b.count - a.count || b.latest.localeCompare(a.latest));
    const reasons = { declined: 0, disliked: 0, handed_off: 0 };
    for (const r of rs) reasons[r.reason]++;
    return {
      question: questions[0]!.text,
      questions: questions.map(({ text, count }) => ({ text, count })),
      conversations: new Set(rs.map((r) => r.conversation_id)).size,
      reasons,
      draft: rs.filter((r) => r.reply).sort((a, b) => b.at.localeCompare(a.at))[0]?.reply ?? null,
      latest: rs.reduce((m, r) => (r.at > m ? r.at : m), ''),
      words: [...new Set(rs.flatMap((r) => [...topicWords(r.lexemes)]))],
    };
  });
  return groups.sort((a, b) => b.conversations - a.conversations || b.latest.localeCompare(a.latest));
}

/**
 * The content gaps of a window: the newest failed questions (at most GAP_QUESTIONS_LIMIT, `capped`
 * when there were more) grouped by what was asked, most conversations first.
 */
export async function readContentGaps(accountId: number, q: InsightsQuery): Promise<{ groups: GapGroup[]; read: number; capped: boolean }> {
  const db = openDb() ?? (await getDb());
  const rows = await listGapQuestions(db, accountId, { from: q.from, to: q.to, channelId: q.channel_id ?? null }, GAP_QUESTIONS_LIMIT + 1);
  const capped = rows.length > GAP_QUESTIONS_LIMIT;
  const read = capped ? rows.slice(0, GAP_QUESTIONS_LIMIT) : rows;
  const synonyms = { common: (await commonSynonymStems()).map((g) => g.map((w) => w.stems)), account: await listSynonymStems(db, accountId) };
  return { groups: groupGapQuestions(read, { synonyms }), read: read.length, capped };
}

/** The content gaps of a window, every group. */
export async function listContentGaps(accountId: number, q: InsightsQuery): Promise<GapGroup[]> {
  return (await readContentGaps(accountId, q)).groups;
}

/** The question texts a gap form posts (a JSON array of strings). */
export function parseGapQuestions(raw: unknown): string[] {
  let value: unknown;
  try {
    value = JSON.parse(String(raw ?? ''));
  } catch {
    value = null;
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((q) => typeof q === 'string'))
    throw new AppError('invalid_request', "questions: a JSON array of the group's questions is required.");
  return value;
}

/** "Dismiss": the group's questions leave the gaps until someone asks them again. */
export async function dismissContentGap(accountId: number, questions: string[]) {
  await dismissGapQuestions(openDb() ?? (await getDb()), accountId, questions);
}

/** "Save answer": a curated knowledge-base entry for the group's questions (and similar ones); the group leaves the gaps. */
export async function answerContentGap(accountId: number, input: { questions: string[]; answer: string }) {
  const saved = await addCuratedAnswer(accountId, input);
  await dismissContentGap(accountId, saved.questions);
  return saved;
}
