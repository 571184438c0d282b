import { getEnv } from '../../env';
import { answerContext, type AnswerEngine } from '../engine';
import { findCuratedAnswer } from '../../knowledge/curated';
import { builtinAnswer, streamWords } from './builtin';
import { openAiCompatibleAnswer } from './openai';

/** The engine this deployment answers with: a model when LLM_BASE_URL is set, else the built-in one; a curated answer before either. */
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
    return withCurated({ answer: (i) => openAiCompatibleAnswer(i, cfg) });
  }
  return withCurated({ answer: builtinAnswer });
}

/** An owner's curated answer (lib/knowledge/curated.ts) is given as written, for its questions and similar ones. */
function withCurated(engine: AnswerEngine): AnswerEngine {
  return {
    answer: async (input) => {
      const curated = await findCuratedAnswer(input.accountId, input.question);
      if (!curated) return engine.answer(input);
      const { settings } = await answerContext(input, 0);
      return { sources: [], showSources: settings.showSources, deltas: streamWords(curated.answer), declined: false, considered: [] };
    },
  };
}
