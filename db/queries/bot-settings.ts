import { eq } from 'drizzle-orm';
import type { Db } from '../client';
import { botSettings } from '../schema';

export type StoredBotSettings = { instructions: string; noAnswerText: string; model: string; showSources: boolean };
/** The account's own model endpoint; `baseUrl` '' = none. The key stays sealed (lib/core/secrets.ts). */
export type StoredModelEndpoint = { baseUrl: string; apiKeySealed: string | null; embeddingModel: string };

/** The account's stored bot settings and model endpoint, or null when it never saved any. */
export async function getBotSettingsRow(db: Db, accountId: number): Promise<(StoredBotSettings & { endpoint: StoredModelEndpoint }) | null> {
  const [row] = await db
    .select({
      instructions: botSettings.instructions,
      noAnswerText: botSettings.noAnswerText,
      model: botSettings.model,
      showSources: botSettings.showSources,
      baseUrl: botSettings.endpointBaseUrl,
      apiKeySealed: botSettings.endpointApiKey,
      embeddingModel: botSettings.embeddingModel,
    })
    .from(botSettings)
    .where(eq(botSettings.accountId, accountId));
  if (!row) return null;
  const { baseUrl, apiKeySealed, embeddingModel, ...settings } = row;
  return { ...settings, endpoint: { baseUrl, apiKeySealed, embeddingModel } };
}

export async function upsertBotSettings(db: Db, accountId: number, values: StoredBotSettings): Promise<void> {
  await db
    .insert(botSettings)
    .values({ accountId, ...values, updatedAt: new Date() })
    .onConflictDoUpdate({ target: botSettings.accountId, set: { ...values, updatedAt: new Date() } });
}

/** Sets the account's model endpoint; `apiKeySealed` undefined keeps the stored key, null clears it. */
export async function upsertModelEndpoint(
  db: Db,
  accountId: number,
  e: { baseUrl: string; apiKeySealed: string | null | undefined; embeddingModel: string },
): Promise<void> {
  const values = {
    endpointBaseUrl: e.baseUrl,
    embeddingModel: e.embeddingModel,
    ...(e.apiKeySealed === undefined ? {} : { endpointApiKey: e.apiKeySealed }),
    updatedAt: new Date(),
  };
  await db
    .insert(botSettings)
    .values({ accountId, ...values })
    .onConflictDoUpdate({ target: botSettings.accountId, set: values });
}
