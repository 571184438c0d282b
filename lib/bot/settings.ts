/**
 * The bot of an account (CONTRACTS §12): instructions added to the model's system prompt, the
 * text it answers when nothing in the knowledge base is relevant, the model (empty: LLM_MODEL),
 * and whether visitors see the sources of an answer.
 */
import { z } from 'zod';
import { getDb } from '../../db/client';
import { getBotSettingsRow, upsertBotSettings } from '../../db/queries/bot-settings';
import { requireAccount, validate } from '../accounts/service';
import { getEnv } from '../env';

export const DEFAULT_NO_ANSWER_TEXT = "I'm sorry, I couldn't find anything about that in our help articles, so I can't answer it reliably. " +
  'Try asking in other words, or contact our team.';

export const BotSettingsInput = z.object({
  instructions: z.string().trim().max(4000, 'must be at most 4000 characters'),
  noAnswerText: z.string().trim().max(1000, 'must be at most 1000 characters'),
  model: z.string().trim().max(100, 'must be at most 100 characters')
    .regex(/^[\w.:/@-]*$/, 'letters, digits and . : / @ _ - only'),
  showSources: z.boolean(),
});
export type BotSettings = z.infer<typeof BotSettingsInput>;

export const DEFAULT_BOT_SETTINGS: BotSettings = { instructions: '', noAnswerText: '', model: '', showSources: true };

/** The settings as stored (empty texts mean "the default"). */
export async function getBotSettings(accountId: number): Promise<BotSettings> {
  return (await getBotSettingsRow(await getDb(), accountId)) ?? DEFAULT_BOT_SETTINGS;
}

/** What the answer engines use: the "no answer" text with its default filled in. */
export async function effectiveBotSettings(accountId: number): Promise<BotSettings> {
  const s = await getBotSettings(accountId);
  return { ...s, noAnswerText: s.noAnswerText || DEFAULT_NO_ANSWER_TEXT };
}

export async function updateBotSettings(accountId: number, input: unknown): Promise<BotSettings> {
  const v = validate(BotSettingsInput, input, { noAnswerText: 'no_answer_text', showSources: 'show_sources' });
  const db = await getDb();
  await requireAccount(db, accountId);
  await upsertBotSettings(db, accountId, v);
  return v;
}

/** Which engine answers (a model when LLM_BASE_URL is set) and the model used when the account names none. */
export function answerEngineInfo(): { engine: 'model' | 'built-in'; defaultModel: string } {
  const env = getEnv();
  return { engine: env.LLM_BASE_URL ? 'model' : 'built-in', defaultModel: env.LLM_MODEL };
}
