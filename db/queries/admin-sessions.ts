import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { adminSessions, adminUsers } from '../schema';

/** A new dashboard session row; expired rows are swept on the way (sign-ins are rare). */
export async function insertAdminSession(db: Db, s: { id: string; userId: number; expiresAt: Date }): Promise<void> {
  await db.delete(adminSessions).where(lt(adminSessions.expiresAt, sql`now()`));
  await db.insert(adminSessions).values(s);
}

/** The signed-in admin of a live session (not revoked, not expired), or null. */
export async function getActiveAdminSession(db: Db, sessionId: string): Promise<{ userId: number; accountId: number; email: string } | null> {
  const [row] = await db.select({ userId: adminUsers.id, accountId: adminUsers.accountId, email: adminUsers.email })
    .from(adminSessions).innerJoin(adminUsers, eq(adminUsers.id, adminSessions.userId))
    .where(and(eq(adminSessions.id, sessionId), isNull(adminSessions.revokedAt), gt(adminSessions.expiresAt, sql`now()`)));
  return row ?? null;
}

export async function revokeAdminSession(db: Db, sessionId: string): Promise<void> {
  await db.update(adminSessions).set({ revokedAt: sql`now()` }).where(and(eq(adminSessions.id, sessionId), isNull(adminSessions.revokedAt)));
}

/**
 * Sets an admin's password hash and revokes every live session of that admin, in one
 * transaction. Null when no admin has that email.
 */
export async function setAdminPasswordAndRevokeSessions(db: Db, email: string, passwordHash: string) {
  return db.transaction(async (tx) => {
    const [user] = await tx.update(adminUsers).set({ passwordHash }).where(eq(adminUsers.email, email))
      .returning({ id: adminUsers.id, accountId: adminUsers.accountId, email: adminUsers.email });
    if (!user) return null;
    const revoked = await tx.update(adminSessions).set({ revokedAt: sql`now()` })
      .where(and(eq(adminSessions.userId, user.id), isNull(adminSessions.revokedAt), gt(adminSessions.expiresAt, sql`now()`)))
      .returning({ id: adminSessions.id });
    return { ...user, sessionsRevoked: revoked.length };
  });
}
