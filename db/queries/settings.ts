import { eq } from 'drizzle-orm';
import type { Db } from '../client';
import { settings } from '../schema';

/** Returns the stored value, storing `fresh` first when the key is new (first writer wins). */
export async function getOrCreateSetting(db: Db, key: string, fresh: string): Promise<string> {
  await db.insert(settings).values({ key, value: fresh }).onConflictDoNothing();
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, key));
  return row!.value;
}
