import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { adminSessions, adminUsers, teamSettings } from '../schema';
import { setPasswordHash } from './team';
import { accountIsLive } from './account-deletion';

/** A new dashboard session row; expired rows are swept on the way (sign-ins are rare). */
export async function insertAdminSession(db: Db, s: { id: string; userId: number; expiresAt: Date }): Promise<void> {
  await db.delete(adminSessions).where(lt(adminSessions.expiresAt, sql`now()`));
  await db.insert(adminSessions).values(s);
}

/**
 * The signed-in member of a live session (not revoked, not expired), or null. `mustSetUpTwoFactor`:
 * the account requires two-factor sign-in and this member has not set it up.
 */
export async function getActiveAdminSession(db: Db, sessionId: string) {
  const [row] = await db
    .select({
      userId: adminUsers.id,
      accountId: adminUsers.accountId,
      email: adminUsers.email,
      name: adminUsers.name,
      role: adminUsers.role,
      mustSetUpTwoFactor: sql<boolean>`(coalesce(${teamSettings.requireTwoFactor}, false) AND ${adminUsers.totpEnabledAt} IS NULL)`,
      lastSeenAt: adminUsers.lastSeenAt,
    })
    .from(adminSessions)
    .innerJoin(adminUsers, eq(adminUsers.id, adminSessions.userId))
    .leftJoin(teamSettings, eq(teamSettings.accountId, adminUsers.accountId))
    .where(and(eq(adminSessions.id, sessionId), isNull(adminSessions.revokedAt), gt(adminSessions.expiresAt, sql`now()`), accountIsLive(adminUsers.accountId)));
  return row ?? null;
}

/** Records that a member used the dashboard (at most once a minute: it is shown in minutes). */
export async function touchLastSeen(db: Db, userId: number): Promise<void> {
  await db
    .update(adminUsers)
    .set({ lastSeenAt: sql`now()` })
    .where(and(eq(adminUsers.id, userId), sql`(${adminUsers.lastSeenAt} IS NULL OR ${adminUsers.lastSeenAt} < now() - interval '1 minute')`));
}

/** Ends every live session of a member (removal, role change, reset); `except` keeps the caller's own. */
export async function revokeSessionsOfUser(db: Db, userId: number, except?: string): Promise<number> {
  const revoked = await db
    .update(adminSessions)
    .set({ revokedAt: sql`now()` })
    .where(
      and(
        eq(adminSessions.userId, userId),
        isNull(adminSessions.revokedAt),
        gt(adminSessions.expiresAt, sql`now()`),
        except ? sql`${adminSessions.id} <> ${except}` : undefined,
      ),
    )
    .returning({ id: adminSessions.id });
  return revoked.length;
}

/** Ends a session; returns its user's id (null when it was already ended). */
export async function revokeAdminSession(db: Db, sessionId: string): Promise<number | null> {
  const [row] = await db
    .update(adminSessions)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(adminSessions.id, sessionId), isNull(adminSessions.revokedAt)))
    .returning({ userId: adminSessions.userId });
  return row?.userId ?? null;
}

/**
 * Sets an admin's password hash and revokes every live session of that admin, in one
 * transaction. Null when no admin has that email.
 */
export async function setAdminPasswordAndRevokeSessions(db: Db, email: string, passwordHash: string) {
  return db.transaction(async (tx) => {
    const [user] = await tx
      .select({ id: adminUsers.id, accountId: adminUsers.accountId, email: adminUsers.email })
      .from(adminUsers)
      .where(eq(adminUsers.email, email));
    if (!user) return null;
    await setPasswordHash(tx as unknown as Db, user.id, passwordHash);
    const revoked = await tx
      .update(adminSessions)
      .set({ revokedAt: sql`now()` })
      .where(and(eq(adminSessions.userId, user.id), isNull(adminSessions.revokedAt), gt(adminSessions.expiresAt, sql`now()`)))
      .returning({ id: adminSessions.id });
    return { ...user, sessionsRevoked: revoked.length };
  });
}
