import { effectiveBotSettings } from '../../bot/settings';
import { getEnv } from '../../env';
import type { AnswerEngine } from '../engine';
import { builtinAnswer } from './builtin';
import { openAiCompatibleAnswer } from './openai';

/**
 * The engine that answers an account: its own endpoint when it set one on /bot, else the
 * operator's model when LLM_BASE_URL is set, else the built-in one.
 */
export function answerEngine(): AnswerEngine {
  return {
    answer: async (i) => {
      const env = getEnv();
      const limits = { model: env.LLM_MODEL, timeoutMs: env.LLM_TIMEOUT_MS, historyTokens: env.LLM_HISTORY_TOKENS, maxRetries: env.LLM_MAX_RETRIES };
      const { endpoint } = await effectiveBotSettings(i.accountId);
      if (endpoint) return openAiCompatibleAnswer(i, { ...limits, endpoint: { own: endpoint } });
      if (env.LLM_BASE_URL) return openAiCompatibleAnswer(i, { ...limits, endpoint: { baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY } });
      return builtinAnswer(i);
    },
  };
}
