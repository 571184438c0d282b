import { effectiveBotSettings } from '../../bot/settings';
import { getEnv } from '../../env';
import { answerContext, type AnswerEngine } from '../engine';
import { findCuratedAnswer } from '../../knowledge/curated';
import { builtinAnswer, streamWords } from './builtin';
import { openAiCompatibleAnswer } from './openai';

/**
 * The engine that answers an account: an owner's curated answer first; then its own endpoint when
 * it set one on /bot, else the operator's model when LLM_BASE_URL is set, else the built-in one.
 */
export function answerEngine(): AnswerEngine {
  return withCurated({
    answer: async (i) => {
      const env = getEnv();
      const limits = { model: env.LLM_MODEL, timeoutMs: env.LLM_TIMEOUT_MS, historyTokens: env.LLM_HISTORY_TOKENS, maxRetries: env.LLM_MAX_RETRIES };
      const { endpoint } = await effectiveBotSettings(i.accountId);
      if (endpoint) return openAiCompatibleAnswer(i, { ...limits, endpoint: { own: endpoint } });
      if (env.LLM_BASE_URL) return openAiCompatibleAnswer(i, { ...limits, endpoint: { baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY } });
      return builtinAnswer(i);
    },
  });
}

/** An owner's curated answer (lib/knowledge/curated.ts) is given as written, for its questions and similar ones. */
function withCurated(engine: AnswerEngine): AnswerEngine {
  return {
    answer: async (input) => {
      const curated = await findCuratedAnswer(input.accountId, input.question);
      if (!curated) return engine.answer(input);
      const { settings } = await answerContext(input, 0);
      return { sources: [], showSources: settings.showSources, deltas: streamWords(curated.answer), declined: false, considered: [], curatedId: curated.id };
    },
  };
}
