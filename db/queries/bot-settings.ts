import { eq } from 'drizzle-orm';
import type { Db } from '../client';
import { botSettings } from '../schema';

export type StoredBotSettings = { instructions: string; noAnswerText: string; model: string; showSources: boolean };

/** The account's stored bot settings, or null when it never saved any. */
export async function getBotSettingsRow(db: Db, accountId: number): Promise<StoredBotSettings | null> {
  const [row] = await db
    .select({
      instructions: botSettings.instructions,
      noAnswerText: botSettings.noAnswerText,
      model: botSettings.model,
      showSources: botSettings.showSources,
    })
    .from(botSettings)
    .where(eq(botSettings.accountId, accountId));
  return row ?? null;
}

export async function upsertBotSettings(db: Db, accountId: number, values: StoredBotSettings): Promise<void> {
  await db
    .insert(botSettings)
    .values({ accountId, ...values, updatedAt: new Date() })
    .onConflictDoUpdate({ target: botSettings.accountId, set: { ...values, updatedAt: new Date() } });
}
