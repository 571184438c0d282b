import { getDb, openDb } from '../../db/client';
import { dismissGapQuestions, listGapQuestions, type GapRow } from '../../db/queries/insights';
import { addCuratedAnswer, topicWords } from '../knowledge/curated';
import { AppError } from '../core/errors';
import type { InsightsQuery } from './contract';

/** At most this many failed questions of each kind are grouped per request (the newest). */
export const GAP_QUESTIONS_LIMIT = 2_000;

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
 * Groups are the connected questions (union–find): two questions are connected when the words they
 * share carry at least half the weight of the lighter one's words, each word weighted by its rarity
 * among the window's questions (log(1 + n/df)). A word most failed questions contain ("order",
 * a template's "topic") links little; with one question per word this is similarQuestions.
 */
export function groupGapQuestions(rows: GapRow[]): GapGroup[] {
  const words = rows.map((r) => topicWords(r.lexemes));
  const df = new Map<string, number>();
  for (const ws of words) for (const w of ws) df.set(w, (df.get(w) ?? 0) + 1);
  const weight = (w: string) => Math.log(1 + rows.length / df.get(w)!);
  const mass = words.map((ws) => [...ws].reduce((n, w) => n + weight(w), 0));
  const connected = (i: number, j: number) => {
    let shared = 0;
    for (const w of words[i]!) if (words[j]!.has(w)) shared += weight(w);
    return shared > 0 && shared >= 0.5 * Math.min(mass[i]!, mass[j]!);
  };
  const parent = rows.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  for (let i = 0; i < rows.length; i++) for (let j = i + 1; j < rows.length; j++) if (root(i) !== root(j) && connected(i, j)) parent[root(j)] = root(i);
  const members = new Map<number, GapRow[]>();
  for (const [i, r] of rows.entries()) members.set(root(i), [...(members.get(root(i)) ?? []), r]);
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

/** The content gaps of a window: failed questions grouped by what was asked, most conversations first. */
export async function listContentGaps(accountId: number, q: InsightsQuery): Promise<GapGroup[]> {
  const db = openDb() ?? (await getDb());
  const rows = await listGapQuestions(db, accountId, { from: q.from, to: q.to, channelId: q.channel_id ?? null }, GAP_QUESTIONS_LIMIT);
  return groupGapQuestions(rows);
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
