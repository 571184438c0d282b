import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { widgetClients, widgetRefusals, widgetSightings, widgetSigningKeys } from '../schema';

export type WidgetClientRow = typeof widgetClients.$inferSelect;

export async function insertWidgetClient(
  db: Db,
  accountId: number,
  v: { id: string; name: string; secretHash: Uint8Array; domains: string[]; channelId: number },
) {
  const [row] = await db
    .insert(widgetClients)
    .values({ accountId, ...v })
    .returning();
  return row!;
}

/** Not tenant-scoped on purpose: the public client id is how a token request finds its account. */
export async function getWidgetClientForAuth(db: Db, clientId: string): Promise<WidgetClientRow | null> {
  const [row] = await db.select().from(widgetClients).where(eq(widgetClients.id, clientId));
  return row ?? null;
}

export async function listWidgetClients(db: Db, accountId: number) {
  return db
    .select({
      id: widgetClients.id,
      name: widgetClients.name,
      domains: widgetClients.domains,
      channelId: widgetClients.channelId,
      createdAt: widgetClients.createdAt,
      secretRotatedAt: widgetClients.secretRotatedAt,
      appearance: widgetClients.appearance,
    })
    .from(widgetClients)
    .where(eq(widgetClients.accountId, accountId))
    .orderBy(widgetClients.createdAt);
}

export async function updateWidgetClient(
  db: Db,
  accountId: number,
  clientId: string,
  v: { name?: string; domains?: string[]; secretHash?: Uint8Array; appearance?: object },
) {
  const [row] = await db
    .update(widgetClients)
    .set({ ...v, ...(v.secretHash ? { secretRotatedAt: sql`now()` } : {}) })
    .where(and(eq(widgetClients.id, clientId), eq(widgetClients.accountId, accountId)))
    .returning({ id: widgetClients.id, name: widgetClients.name, domains: widgetClients.domains, appearance: widgetClients.appearance });
  return row ?? null;
}

/**
 * Deletes the client with its refusal and sighting rows (diagnostics of a client that no longer
 * exists). Conversations and attachments keep `client_id` as a plain historical label (no foreign
 * key), and the channel stays, so past chats remain readable in the API and the dashboard.
 */
export async function deleteWidgetClientRow(db: Db, accountId: number, clientId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .delete(widgetClients)
      .where(and(eq(widgetClients.id, clientId), eq(widgetClients.accountId, accountId)))
      .returning({ id: widgetClients.id });
    if (!row) return false;
    await tx.delete(widgetRefusals).where(eq(widgetRefusals.clientId, clientId));
    await tx.delete(widgetSightings).where(eq(widgetSightings.clientId, clientId));
    return true;
  });
}

export async function listSigningKeys(db: Db) {
  return db
    .select({ kid: widgetSigningKeys.kid, secret: widgetSigningKeys.secret })
    .from(widgetSigningKeys)
    .where(isNull(widgetSigningKeys.retiredAt))
    .orderBy(sql`${widgetSigningKeys.createdAt} DESC`);
}

export async function insertSigningKey(db: Db, kid: string, secret: string) {
  await db.insert(widgetSigningKeys).values({ kid, secret }).onConflictDoNothing();
}
