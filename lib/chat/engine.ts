import { getEnv } from '../env';
import { findPassages } from '../knowledge/service';
import { builtinAnswer } from './engines/builtin';
import { openAiCompatibleAnswer } from './engines/openai';

export type Source = { document_id: string; filename: string; passage: string; rank?: number };
export type AnswerInput = { accountId: number; conversationId: string; question: string; signal: AbortSignal };
/** An answer: the sources it uses, known up front, and its text as a stream of deltas. */
export type Answer = { sources: Source[]; deltas: AsyncIterable<string> };

export class EngineError extends Error {}

export interface AnswerEngine {
  answer(input: AnswerInput): Promise<Answer>;
}

/** Retrieval is shared: both engines answer from the account's passages. */
export async function retrieve(input: AnswerInput): Promise<Source[]> {
  const passages = await findPassages(input.accountId, input.conversationId, input.question, 3);
  return passages.map((p) => ({ document_id: p.document_id, filename: p.filename, passage: p.content, rank: p.rank }));
}

export function answerEngine(): AnswerEngine {
  const env = getEnv();
  if (env.LLM_BASE_URL) {
    return { answer: (i) => openAiCompatibleAnswer(i, { baseUrl: env.LLM_BASE_URL!, apiKey: env.LLM_API_KEY, model: env.LLM_MODEL, timeoutMs: env.LLM_TIMEOUT_MS }) };
  }
  return { answer: builtinAnswer };
}
