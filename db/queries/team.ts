import { and, asc, desc, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../client';
import { accountIsLive } from './account-deletion';
import { adminUsers, emailTokens, invitations, recoveryCodes, teamSettings } from '../schema';

/** Members and their sign-in secrets; every query takes the account (tenancy) or a user id it was given by a session. */

export async function getAccountOwner(db: Db, accountId: number): Promise<{ id: number } | null> {
  const [row] = await db
    .select({ id: adminUsers.id })
    .from(adminUsers)
    .where(and(eq(adminUsers.accountId, accountId), eq(adminUsers.role, 'owner')));
  return row ?? null;
}

export async function listMembers(db: Db, accountId: number) {
  return db
    .select({
      id: adminUsers.id,
      email: adminUsers.email,
      name: adminUsers.name,
      role: adminUsers.role,
      twoFactor: sql<boolean>`${adminUsers.totpEnabledAt} IS NOT NULL`,
      lastSeenAt: adminUsers.lastSeenAt,
      createdAt: adminUsers.createdAt,
    })
    .from(adminUsers)
    .where(eq(adminUsers.accountId, accountId))
    .orderBy(asc(adminUsers.id));
}

export async function getMember(db: Db, accountId: number, userId: number) {
  const [row] = await db
    .select()
    .from(adminUsers)
    .where(and(eq(adminUsers.accountId, accountId), eq(adminUsers.id, userId)));
  return row ?? null;
}

/** Locks the member's row for the transaction (role changes and removals race otherwise). */
export async function lockMember(db: Db, accountId: number, userId: number) {
  const [row] = await db
    .select({ id: adminUsers.id, role: adminUsers.role, email: adminUsers.email })
    .from(adminUsers)
    .where(and(eq(adminUsers.accountId, accountId), eq(adminUsers.id, userId)))
    .for('update');
  return row ?? null;
}

export async function setMemberRole(db: Db, accountId: number, userId: number, role: string): Promise<void> {
  await db
    .update(adminUsers)
    .set({ role })
    .where(and(eq(adminUsers.accountId, accountId), eq(adminUsers.id, userId)));
}

/** Deletes a member; their session rows go with them (ON DELETE CASCADE), so every instance refuses them at once. */
export async function deleteMember(db: Db, accountId: number, userId: number): Promise<boolean> {
  const gone = await db
    .delete(adminUsers)
    .where(and(eq(adminUsers.accountId, accountId), eq(adminUsers.id, userId)))
    .returning({ id: adminUsers.id });
  return gone.length > 0;
}

export async function setMemberName(db: Db, userId: number, name: string): Promise<void> {
  await db.update(adminUsers).set({ name }).where(eq(adminUsers.id, userId));
}

/** Sets a user's password; every reset link of theirs dies with the old one (call it in a transaction). */
export async function setPasswordHash(db: Db, userId: number, passwordHash: string): Promise<void> {
  await db.update(adminUsers).set({ passwordHash }).where(eq(adminUsers.id, userId));
  await db
    .update(emailTokens)
    .set({ usedAt: sql`now()` })
    .where(and(eq(emailTokens.userId, userId), eq(emailTokens.kind, 'reset'), isNull(emailTokens.usedAt)));
}

/** A member of a live account. */
export async function getUserById(db: Db, userId: number) {
  const [row] = await db
    .select()
    .from(adminUsers)
    .where(and(eq(adminUsers.id, userId), accountIsLive(adminUsers.accountId)));
  return row ?? null;
}

export async function getTeamSettings(db: Db, accountId: number): Promise<{ requireTwoFactor: boolean }> {
  const [row] = await db.select({ requireTwoFactor: teamSettings.requireTwoFactor }).from(teamSettings).where(eq(teamSettings.accountId, accountId));
  return row ?? { requireTwoFactor: false };
}

export async function setRequireTwoFactor(db: Db, accountId: number, requireTwoFactor: boolean): Promise<void> {
  await db.insert(teamSettings).values({ accountId, requireTwoFactor }).onConflictDoUpdate({ target: teamSettings.accountId, set: { requireTwoFactor } });
}

/** Two-factor: a secret being set up (not yet enabled). */
export async function setPendingTotpSecret(db: Db, userId: number, encryptedSecret: string): Promise<void> {
  await db
    .update(adminUsers)
    .set({ totpSecret: encryptedSecret, totpEnabledAt: null, totpLastStep: null })
    .where(and(eq(adminUsers.id, userId), isNull(adminUsers.totpEnabledAt)));
}

export async function enableTotp(db: Db, userId: number, step: number, codeHashes: string[]): Promise<boolean> {
  const [row] = await db
    .update(adminUsers)
    .set({ totpEnabledAt: sql`now()`, totpLastStep: step })
    .where(and(eq(adminUsers.id, userId), isNull(adminUsers.totpEnabledAt)))
    .returning({ id: adminUsers.id });
  if (!row) return false;
  await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  await db.insert(recoveryCodes).values(codeHashes.map((codeHash) => ({ userId, codeHash })));
  return true;
}

export async function disableTotp(db: Db, userId: number): Promise<void> {
  await db.update(adminUsers).set({ totpSecret: null, totpEnabledAt: null, totpLastStep: null }).where(eq(adminUsers.id, userId));
  await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
}

/** Accepts a time step once: false when this step (or a later one) was already used. */
export async function acceptTotpStep(db: Db, userId: number, step: number): Promise<boolean> {
  const rows = await db
    .update(adminUsers)
    .set({ totpLastStep: step })
    .where(and(eq(adminUsers.id, userId), sql`(${adminUsers.totpLastStep} IS NULL OR ${adminUsers.totpLastStep} < ${step})`))
    .returning({ id: adminUsers.id });
  return rows.length > 0;
}

/** Uses a recovery code once (the row is deleted). */
export async function useRecoveryCode(db: Db, userId: number, codeHash: string): Promise<boolean> {
  const rows = await db
    .delete(recoveryCodes)
    .where(and(eq(recoveryCodes.userId, userId), eq(recoveryCodes.codeHash, codeHash)))
    .returning({ userId: recoveryCodes.userId });
  return rows.length > 0;
}

export async function countRecoveryCodes(db: Db, userId: number): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  return row?.n ?? 0;
}

/** Invitations */

export async function insertInvitation(db: Db, v: { accountId: number; email: string; role: string; tokenHash: string; invitedBy: number; expiresAt: Date }) {
  // A new invitation for the same address replaces the pending one.
  await db
    .update(invitations)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(invitations.accountId, v.accountId), eq(invitations.email, v.email), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)));
  const [row] = await db.insert(invitations).values(v).returning({ id: invitations.id });
  return row!;
}

export async function listPendingInvitations(db: Db, accountId: number) {
  return db
    .select({ id: invitations.id, email: invitations.email, role: invitations.role, createdAt: invitations.createdAt, expiresAt: invitations.expiresAt })
    .from(invitations)
    .where(and(eq(invitations.accountId, accountId), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, sql`now()`)))
    .orderBy(desc(invitations.createdAt));
}

/** Revokes a pending invitation; its email, or null when there was none to revoke. */
export async function revokeInvitation(db: Db, accountId: number, id: string): Promise<string | null> {
  const rows = await db
    .update(invitations)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(invitations.accountId, accountId), eq(invitations.id, id), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)))
    .returning({ email: invitations.email });
  return rows[0]?.email ?? null;
}

/** Revokes the pending invitations `userId` sent (their removal); returns how many. */
export async function revokeInvitationsBy(db: Db, accountId: number, userId: number): Promise<number> {
  const rows = await db
    .update(invitations)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(invitations.accountId, accountId), eq(invitations.invitedBy, userId), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)))
    .returning({ id: invitations.id });
  return rows.length;
}

/** A pending invitation by its token's hash (not accepted, revoked or expired), or null. */
export async function getPendingInvitationByHash(db: Db, tokenHash: string) {
  const [row] = await db
    .select()
    .from(invitations)
    .where(and(eq(invitations.tokenHash, tokenHash), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, sql`now()`)));
  return row ?? null;
}

/** Marks an invitation accepted once: false when another request accepted (or it was revoked or expired) first. */
export async function markInvitationAccepted(db: Db, id: string): Promise<boolean> {
  const rows = await db
    .update(invitations)
    .set({ acceptedAt: sql`now()` })
    .where(and(eq(invitations.id, id), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, sql`now()`)))
    .returning({ id: invitations.id });
  return rows.length > 0;
}

/** Emailed single-use links (password reset, sign-up confirmation) */

export async function insertEmailToken(db: Db, v: { tokenHash: string; kind: string; userId?: number; payload?: unknown; expiresAt: Date }): Promise<void> {
  await db.delete(emailTokens).where(sql`${emailTokens.expiresAt} < now() - interval '1 day'`);
  await db.insert(emailTokens).values(v);
}

/** Uses a token once: its row, or null when unknown, of another kind, used or expired. */
export async function consumeEmailToken(db: Db, tokenHash: string, kind: string) {
  const [row] = await db
    .update(emailTokens)
    .set({ usedAt: sql`now()` })
    .where(and(eq(emailTokens.tokenHash, tokenHash), eq(emailTokens.kind, kind), isNull(emailTokens.usedAt), gt(emailTokens.expiresAt, sql`now()`)))
    .returning({ userId: emailTokens.userId, payload: emailTokens.payload });
  return row ?? null;
}

export async function peekEmailToken(db: Db, tokenHash: string, kind: string): Promise<boolean> {
  const [row] = await db
    .select({ k: emailTokens.kind })
    .from(emailTokens)
    .where(and(eq(emailTokens.tokenHash, tokenHash), eq(emailTokens.kind, kind), isNull(emailTokens.usedAt), gt(emailTokens.expiresAt, sql`now()`)));
  return !!row;
}
