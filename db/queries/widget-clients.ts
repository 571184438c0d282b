import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { widgetClients, widgetSigningKeys } from '../schema';

export type WidgetClientRow = typeof widgetClients.$inferSelect;

export async function insertWidgetClient(db: Db, accountId: number, v: { id: string; name: string; secretHash: Uint8Array; domains: string[]; channelId: number }) {
  const [row] = await db.insert(widgetClients).values({ accountId, ...v }).returning();
  return row!;
}

/** Not tenant-scoped on purpose: the public client id is how a token request finds its account. */
export async function getWidgetClientForAuth(db: Db, clientId: string): Promise<WidgetClientRow | null> {
  const [row] = await db.select().from(widgetClients).where(eq(widgetClients.id, clientId));
  return row ?? null;
}

export async function listWidgetClients(db: Db, accountId: number) {
  return db.select({ id: widgetClients.id, name: widgetClients.name, domains: widgetClients.domains, channelId: widgetClients.channelId,
    createdAt: widgetClients.createdAt, secretRotatedAt: widgetClients.secretRotatedAt })
    .from(widgetClients).where(eq(widgetClients.accountId, accountId)).orderBy(widgetClients.createdAt);
}

export async function updateWidgetClient(db: Db, accountId: number, clientId: string, v: { name?: string; domains?: string[]; secretHash?: Uint8Array }) {
  const [row] = await db.update(widgetClients)
    .set({ ...v, ...(v.secretHash ? { secretRotatedAt: sql`now()` } : {}) })
    .where(and(eq(widgetClients.id, clientId), eq(widgetClients.accountId, accountId)))
    .returning({ id: widgetClients.id, name: widgetClients.name, domains: widgetClients.domains });
  return row ?? null;
}

export async function listSigningKeys(db: Db) {
  return db.select({ kid: widgetSigningKeys.kid, secret: widgetSigningKeys.secret }).from(widgetSigningKeys)
    .where(isNull(widgetSigningKeys.retiredAt)).orderBy(sql`${widgetSigningKeys.createdAt} DESC`);
}

export async function insertSigningKey(db: Db, kid: string, secret: string) {
  await db.insert(widgetSigningKeys).values({ kid, secret }).onConflictDoNothing();
}
