import { eq } from 'drizzle-orm';
import type { Db } from '../client';
import { settings } from '../schema';

/** Returns the stored value, storing `fresh` first when the key is new (first writer wins). */
export async function getOrCreateSetting(db: Db, key: string, fresh: string): Promise<string> {
  await db.insert(settings).values({ key, value: fresh }).onConflictDoNothing();
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, key));
  return row!.value;
}

/** Stores `value` under `key`, replacing what was there (last writer wins). */
export async function putSetting(db: Db, key: string, value: string): Promise<void> {
  await db.insert(settings).values({ key, value }).onConflictDoUpdate({ target: settings.key, set: { value } });
}

export async function getSetting(db: Db, key: string): Promise<string | null> {
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, key));
  return row?.value ?? null;
}
