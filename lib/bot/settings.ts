/**
 * The bot of an account (docs/contracts.md §12): instructions added to the model's system prompt, the
 * text it answers when nothing in the knowledge base is relevant, the model (empty: LLM_MODEL),
 * whether visitors see the sources of an answer, and the account's own model endpoint (§16).
 */
import { z } from 'zod';
import { getDb, type Db } from '../../db/client';
import { recordAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';
import { getBotSettingsRow, upsertBotSettings, upsertModelEndpoint, type StoredModelEndpoint } from '../../db/queries/bot-settings';
import { requireAccount, validate } from '../accounts/service';
import { onInvalidation, publishInvalidation } from '../cache/invalidation';
import { getEnv } from '../env';

export const DEFAULT_NO_ANSWER_TEXT =
  "I'm sorry, I couldn't find anything about that in our help articles, so I can't answer it reliably. " + 'Try asking in other words, or contact our team.';

export const BotSettingsInput = z.object({
  instructions: z.string().trim().max(4000, 'must be at most 4000 characters'),
  noAnswerText: z.string().trim().max(1000, 'must be at most 1000 characters'),
  model: z
    .string()
    .trim()
    .max(100, 'must be at most 100 characters')
    .regex(/^[\w.:/@-]*$/, 'letters, digits and . : / @ _ - only'),
  showSources: z.boolean(),
});
export type BotSettings = z.infer<typeof BotSettingsInput>;

export const DEFAULT_BOT_SETTINGS: BotSettings = { instructions: '', noAnswerText: '', model: '', showSources: true };

export type { StoredModelEndpoint };
/** The settings and the account's own model endpoint (null: none), as stored. */
type StoredBot = BotSettings & { endpoint: StoredModelEndpoint | null };

async function readBot(accountId: number): Promise<StoredBot> {
  const row = await getBotSettingsRow(await getDb(), accountId);
  if (!row) return { ...DEFAULT_BOT_SETTINGS, endpoint: null };
  return { ...row, endpoint: row.endpoint.baseUrl ? row.endpoint : null };
}

/** The settings as stored (empty texts mean "the default"). */
export async function getBotSettings(accountId: number): Promise<BotSettings> {
  const { endpoint: _e, ...settings } = await readBot(accountId);
  return settings;
}

/** What /bot shows of the account's endpoint: never the key, only whether one is set. */
export async function getModelEndpointView(accountId: number): Promise<{ baseUrl: string; keySet: boolean; embeddingModel: string }> {
  const { endpoint } = await readBot(accountId);
  return { baseUrl: endpoint?.baseUrl ?? '', keySet: !!endpoint?.apiKeySealed, embeddingModel: endpoint?.embeddingModel ?? '' };
}

/** The sealed key stored for the account (to test a changed form without retyping it). */
export async function getStoredModelEndpoint(accountId: number): Promise<StoredModelEndpoint | null> {
  return (await readBot(accountId)).endpoint;
}

/** Stores the account's endpoint (validated and sealed by lib/answers/model-endpoint.ts) with its audit entry, and tells every instance. */
export async function storeModelEndpoint(
  by: AuditBy,
  accountId: number,
  e: { baseUrl: string; apiKeySealed: string | null | undefined; embeddingModel: string },
) {
  const db = await getDb();
  await requireAccount(db, accountId);
  // The entry names the address and what happened to the key, never the key.
  const key = e.apiKeySealed === undefined ? '' : e.apiKeySealed === null ? ', key cleared' : ', key set';
  const target = e.baseUrl ? `${e.baseUrl}${e.embeddingModel ? ` (embeddings ${e.embeddingModel})` : ''}${key}` : 'own endpoint removed';
  await db.transaction(async (tx) => {
    await upsertModelEndpoint(tx as unknown as Db, accountId, e);
    await recordAudit(tx as unknown as Db, accountId, by, 'model.settings_changed', target);
  });
  await publishInvalidation(TOPIC, String(accountId));
}

/** How long this process may answer with settings it read: the bound on using changed settings (docs/contracts.md §9). */
export const BOT_SETTINGS_CACHE_MS = 1000;
const CACHE_LIMIT = 10_000;
const TOPIC = 'bot-settings';

/**
 * Settings read in the last second, per process (and per module copy), so an answer, a resume and
 * a history page do not each read the database. A change reaches every instance at once through
 * lib/cache/invalidation (topic 'bot-settings'); when that message is lost (Redis away) an entry
 * still lives at most BOT_SETTINGS_CACHE_MS counted from when its read STARTED. A read that
 * overlaps an invalidation is used once but not kept.
 */
const cache = new Map<number, { settings: StoredBot; readAt: number }>();
let generation = 0;
let listening = false;

async function cachedBotSettings(accountId: number): Promise<StoredBot> {
  if (!listening) {
    listening = true;
    onInvalidation(TOPIC, (id) => {
      cache.delete(Number(id));
      generation++;
    });
  }
  const now = performance.now();
  const hit = cache.get(accountId);
  if (hit && now - hit.readAt < BOT_SETTINGS_CACHE_MS) return hit.settings;
  if (hit) cache.delete(accountId);
  const startedGeneration = generation;
  const settings = await readBot(accountId);
  if (generation === startedGeneration) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(accountId, { settings, readAt: now });
  }
  return settings;
}

/** What the answer engines use: the "no answer" text with its default filled in, and the account's endpoint. */
export async function effectiveBotSettings(accountId: number): Promise<StoredBot> {
  const s = await cachedBotSettings(accountId);
  return { ...s, noAnswerText: s.noAnswerText || DEFAULT_NO_ANSWER_TEXT };
}

const FIELD_NAMES: Record<keyof BotSettings, string> = {
  instructions: 'instructions',
  noAnswerText: 'no_answer_text',
  model: 'model',
  showSources: 'show_sources',
};

/** Saves the settings; the audit entry (written with them) names the fields that changed, and none is written when nothing did. */
export async function updateBotSettings(by: AuditBy, accountId: number, input: unknown): Promise<BotSettings> {
  const v = validate(BotSettingsInput, input, { noAnswerText: 'no_answer_text', showSources: 'show_sources' });
  const db = await getDb();
  await requireAccount(db, accountId);
  await db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const before = (await getBotSettingsRow(tx, accountId)) ?? DEFAULT_BOT_SETTINGS;
    await upsertBotSettings(tx, accountId, v);
    const changed = (Object.keys(FIELD_NAMES) as Array<keyof BotSettings>).filter((k) => before[k] !== v[k]).map((k) => FIELD_NAMES[k]);
    if (changed.length > 0) await recordAudit(tx, accountId, by, 'bot.settings_changed', changed.join(', '));
  });
  await publishInvalidation(TOPIC, String(accountId));
  return v;
}

/** Which engine answers (the account's endpoint, else the operator's model, else the built-in one) and the model used when the account names none. */
export function answerEngineInfo(endpoint: { baseUrl: string }): { engine: 'own model' | 'model' | 'built-in'; defaultModel: string } {
  const env = getEnv();
  return { engine: endpoint.baseUrl ? 'own model' : env.LLM_BASE_URL ? 'model' : 'built-in', defaultModel: env.LLM_MODEL };
}
