import { getEnv } from '../../env';
import type { AnswerEngine } from '../engine';
import { builtinAnswer } from './builtin';
import { openAiCompatibleAnswer } from './openai';

/** The engine this deployment answers with: a model when LLM_BASE_URL is set, else the built-in one. */
export function answerEngine(): AnswerEngine {
  const env = getEnv();
  if (env.LLM_BASE_URL) {
    const cfg = {
      baseUrl: env.LLM_BASE_URL,
      apiKey: env.LLM_API_KEY,
      model: env.LLM_MODEL,
      timeoutMs: env.LLM_TIMEOUT_MS,
      historyTokens: env.LLM_HISTORY_TOKENS,
      maxRetries: env.LLM_MAX_RETRIES,
    };
    return { answer: (i) => openAiCompatibleAnswer(i, cfg) };
  }
  return { answer: builtinAnswer };
}
