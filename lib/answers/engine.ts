import { getDb } from '../../db/client';
import { listConversationTurns } from '../../db/queries/conversation-turns';
import { effectiveBotSettings, type BotSettings, type StoredModelEndpoint } from '../bot/settings';
import { findPassages, findPassagesForEach, type RetrievalQuery } from '../knowledge/service';
import { isRelevant, type RankedPassage } from '../knowledge/ranking';
import type { Source } from '../conversations/shapes';
import { fuseRankings, rankByEmbedding } from './embeddings';

export type { Source };
export type AnswerInput = { accountId: number; conversationId: string; question: string; signal: AbortSignal };
/** A passage the engine considered, with its place in the ranking (for "Try a question"). */
export type ConsideredPassage = Source & { rank: number; score: number; relevance: number; used: boolean };
/**
 * An answer: the sources it uses (known up front; `[]` when declined), whether visitors may see
 * them (the account's "show sources"; the stored response keeps them either way), its text as a
 * stream of deltas, whether it declined for lack of a relevant passage, and the ranking it chose from.
 */
export type Answer = {
  sources: Source[];
  showSources: boolean;
  deltas: AsyncIterable<string>;
  declined: boolean;
  considered: ConsideredPassage[];
  /** The owner's curated answer given as written (it has no passage sources). */
  curatedId?: string;
};

/** An answer that could not be produced. Its message is what visitors see: never a provider's text. */
export class EngineError extends Error {}

export interface AnswerEngine {
  answer(input: AnswerInput): Promise<Answer>;
}

/**
 * The relevance floor: a passage must cover at least this share of the question's information
 * and two of its words (lib/knowledge/ranking.ts isRelevant; words shared only through the stemmer
 * do not count) to be used. Tuned on the evaluation set (BENCHMARKS.md, docs/DECISIONS.md).
 */
export const RELEVANCE_FLOOR = 0.35;

/** What every engine starts from: the bot's settings and the conversation so far. */
export type AnswerContext = { settings: BotSettings & { endpoint: StoredModelEndpoint | null }; turns: Array<{ question: string; answer: string }> };

export async function answerContext(input: AnswerInput, turns: number): Promise<AnswerContext> {
  const settings = await effectiveBotSettings(input.accountId);
  const history = turns > 0 ? await listConversationTurns(await getDb(), input.accountId, input.conversationId, turns) : [];
  return { settings, turns: history.filter((t) => !t.error).map((t) => ({ question: t.question, answer: t.answer })) };
}

/** How deep each list goes before reciprocal rank fusion. */
const FUSION_DEPTH = 20;

/** Irregular verbs in all their forms: only the built-in engine asks (docs/decisions/model-per-account.md). */
export type VerbFormsUse = 'never' | 'always' | 'retry';

/** The question (weight 1) and the last two earlier questions (the latest 0.5, the one before 0.25). */
function retrievalQuery(question: string, earlierQuestions: string[]): RetrievalQuery {
  const query: RetrievalQuery = [{ text: question, weight: 1 }];
  earlierQuestions
    .slice(-2)
    .reverse()
    .forEach((q, i) => {
      query.push({ text: q, weight: i === 0 ? 0.5 : 0.25 });
    });
  return query;
}

const verbFormsOf = (use: VerbFormsUse) => (use === 'retry' ? { mode: 'retry' as const, relevant } : { mode: use });

/**
 * Ranked passages for a question; earlier questions of the conversation join the query with less
 * weight (a follow-up such as "how much does that cost?" is about what came before). With an
 * endpoint that serves embeddings, BM25's ranking is fused with the embeddings' (lib/answers/embeddings.ts).
 */
export async function rankForQuestion(
  input: AnswerInput,
  earlierQuestions: string[] = [],
  limit = 5,
  endpoint: StoredModelEndpoint | null = null,
  verbForms: VerbFormsUse = 'never',
): Promise<RankedPassage[]> {
  const query = retrievalQuery(input.question, earlierQuestions);
  if (!endpoint?.embeddingModel) return findPassages(input.accountId, input.conversationId, query, limit, verbFormsOf(verbForms));
  const [lexical, semantic] = await Promise.all([
    findPassages(input.accountId, input.conversationId, query, FUSION_DEPTH),
    rankByEmbedding(input.accountId, endpoint, [...earlierQuestions.slice(-1), input.question].join('\n'), FUSION_DEPTH, input.signal).catch((e) => {
      // BM25 alone still answers; the operator sees why the embeddings were left out.
      console.error(`question embedding failed (account ${input.accountId}): ${(e as Error).message}`);
      return [];
    }),
  ]);
  return fuseRankings(lexical, semantic).slice(0, limit);
}

/** Several BM25 rankings of one question (rankForQuestion without embeddings), read from the database together. */
export async function rankEachForQuestion(
  input: AnswerInput,
  rankings: Array<{ earlierQuestions: string[]; limit: number; verbForms: VerbFormsUse }>,
): Promise<RankedPassage[][]> {
  return findPassagesForEach(
    input.accountId,
    input.conversationId,
    rankings.map((r) => ({ query: retrievalQuery(input.question, r.earlierQuestions), limit: r.limit, verbForms: verbFormsOf(r.verbForms) })),
  );
}

export const relevant = (p: RankedPassage) => isRelevant(p, RELEVANCE_FLOOR);

/**
 * What a passage is cited as, in the answer's text ("From **…**:") and in its sources (widget,
 * transcript, API): the document's title, or for a file the visitor attached in this conversation
 * "your file <file name>", so the visitor's own file never reads as the shop's knowledge base.
 */
export const citationTitle = (p: Pick<RankedPassage, 'title' | 'filename' | 'visitor_file'>): string =>
  p.visitor_file ? `your file ${p.filename}` : p.title || p.filename;

export const toSource = (p: RankedPassage): Source => ({ document_id: p.document_id, title: citationTitle(p), passage: p.content });

/**
 * The sources a visitor gets (live answer.done, resume, history): none when the account turned
 * sources off. The response row and its stored event keep them for the account (dashboard transcript).
 */
export function sourcesForVisitors(sources: Source[], showSources: boolean): Source[] {
  return showSources ? sources : [];
}

export function considered(ranked: RankedPassage[], used: RankedPassage[]): ConsideredPassage[] {
  return ranked.map((p, i) => ({ ...toSource(p), rank: i + 1, score: p.score, relevance: p.relevance, used: used.includes(p) }));
}
