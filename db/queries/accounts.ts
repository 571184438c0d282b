import { and, eq, isNull, sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { accounts, adminUsers } from '../schema';
import { accountIsLive } from './account-deletion';

export async function insertAccount(db: Db, name: string): Promise<{ id: number; name: string }> {
  const [row] = await db.insert(accounts).values({ name }).returning({ id: accounts.id, name: accounts.name });
  return row!;
}

/** A live account (one being deleted is gone for every door). */
export async function getAccountById(db: Db, accountId: number): Promise<{ id: number; name: string } | null> {
  const [row] = await db
    .select({ id: accounts.id, name: accounts.name })
    .from(accounts)
    .where(and(eq(accounts.id, accountId), isNull(accounts.deletedAt)));
  return row ?? null;
}

export async function countAccounts(db: Db): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(accounts);
  return row?.n ?? 0;
}

/** A new member; null when the email already belongs to a user. */
export async function insertAdminUser(db: Db, accountId: number, email: string, passwordHash: string, opts: { role: string; name?: string }) {
  const [row] = await db
    .insert(adminUsers)
    .values({ accountId, email, passwordHash, role: opts.role, name: opts.name ?? '' })
    .onConflictDoNothing({ target: adminUsers.email })
    .returning({ id: adminUsers.id, accountId: adminUsers.accountId, email: adminUsers.email, name: adminUsers.name, role: adminUsers.role });
  return row ?? null;
}

/** A member of a live account by email (the sign-in's lookup). */
export async function getAdminUserByEmail(db: Db, email: string) {
  const [row] = await db
    .select()
    .from(adminUsers)
    .where(and(eq(adminUsers.email, email), accountIsLive(adminUsers.accountId)));
  return row ?? null;
}

/**
 * Takes the account's row lock for the rest of the transaction. Every writer that changes the
 * account's counters takes it first, so counters stay exact under concurrent writers.
 */
export async function lockAccountForWrite(db: Db, accountId: number): Promise<boolean> {
  const found = await rows<{ id: number }>(db, sql`SELECT id FROM accounts WHERE id = ${accountId} AND deleted_at IS NULL FOR UPDATE`);
  return found.length > 0;
}
