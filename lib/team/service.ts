import { getDb, type Db } from '../../db/client';
import { getAccountById, insertAdminUser, lockAccountForWrite } from '../../db/queries/accounts';
import {
  deleteMember,
  getAccountOwner,
  getPendingInvitationByHash,
  getTeamSettings,
  insertInvitation,
  listMembers,
  listPendingInvitations,
  lockMember,
  markInvitationAccepted,
  revokeInvitation as revokeInvitationRow,
  revokeInvitationsBy,
  setMemberRole,
  setRequireTwoFactor as setRequireTwoFactorRow,
} from '../../db/queries/team';
import { validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { publishInvalidation } from '../cache/invalidation';
import { hashLinkToken, LINK_TOKEN_RE, newLinkToken, signTicket } from '../auth/email-tokens';
import { hashPassword } from '../auth/passwords';
import { sessionsOfAccountChanged } from '../auth/session-events';
import { canAssignRole, requireRole, type Role } from '../auth/roles';
import { dashboardUrl } from '../auth/session-secret';
import { getEnv } from '../env';
import { getLimiter } from '../limits/limiter';
import { invitationMail } from '../mail/templates';
import { writeBoundedMail } from '../mail/outbox';
import { limitPasswordForm } from './form-limits';
import { recordAudit } from '../audit/service';
import { memberBy, type AuditBy } from '../audit/contract';
import { AcceptInvitationInput, ChangeRoleInput, InvitationIdInput, InviteInput, MemberIdInput } from './contract';

/**
 * The team of an account (docs/contracts.md §13). `actor` is the signed-in member; every rule is checked here, for every door.
 * Each change takes `by` (who and from where, lib/audit) and writes its audit entry in its own transaction.
 */
export type Actor = { accountId: number; userId: number; role: Role; email: string; name: string };

export const INVITATION_DAYS = 7;
const asDb = (tx: unknown) => tx as Db;

export async function getTeam(actor: Actor) {
  requireRole(actor, 'team.manage');
  const db = await getDb();
  const [members, invitations, settings] = await Promise.all([
    listMembers(db, actor.accountId),
    listPendingInvitations(db, actor.accountId),
    getTeamSettings(db, actor.accountId),
  ]);
  return { members, invitations, requireTwoFactor: settings.requireTwoFactor };
}

/** Invites an address (rate-limited per account); the mail is written in the same transaction. */
export async function inviteMember(by: AuditBy, actor: Actor, input: { email: unknown; role: unknown }) {
  requireRole(actor, 'team.manage');
  const v = validate(InviteInput, input);
  if (!canAssignRole(actor.role, v.role)) throw new AppError('forbidden', 'Your role may not invite with this role.');
  const db = await getDb();
  // No "already a user" answer: it would tell any admin who has an account here (the acceptance refuses it).
  await getLimiter('team:invitations', { points: getEnv().INVITATIONS_PER_HOUR, durationSeconds: 3600 }).enforce(
    String(actor.accountId),
    'invitations from this account',
  );
  const account = await getAccountById(db, actor.accountId);
  const { token, hash } = newLinkToken();
  let id = '';
  const mail = invitationMail(v.email, {
    accountName: account?.name ?? 'svc',
    inviter: actor.name || actor.email,
    role: v.role,
    url: dashboardUrl(`/invite/${token}`),
  });
  const written = await writeBoundedMail(actor.accountId, mail, async (tx) => {
    const row = await insertInvitation(tx, {
      accountId: actor.accountId,
      email: v.email,
      role: v.role,
      tokenHash: hash,
      invitedBy: actor.userId,
      expiresAt: new Date(Date.now() + INVITATION_DAYS * 86_400_000),
    });
    id = row.id;
    await recordAudit(tx, actor.accountId, by, 'member.invited', `${v.email} as ${v.role}`);
  });
  if (!written) throw new AppError('rate_limited', 'Too many emails to this address in the last hour; try again later.');
  return { id, email: v.email, role: v.role };
}

export async function revokeInvitation(by: AuditBy, actor: Actor, input: { id: unknown }) {
  requireRole(actor, 'team.manage');
  const v = validate(InvitationIdInput, input);
  const db = await getDb();
  await db.transaction(async (tx) => {
    const email = await revokeInvitationRow(asDb(tx), actor.accountId, v.id);
    if (email === null) throw new AppError('not_found', 'No pending invitation with that id.');
    await recordAudit(asDb(tx), actor.accountId, by, 'member.invitation_revoked', email);
  });
  return { id: v.id, revoked: true as const };
}

/** The member's row, locked for the transaction (or the 404). */
async function lockMemberOf(db: Db, accountId: number, userId: number) {
  const member = await lockMember(db, accountId, userId);
  if (!member) throw new AppError('not_found', 'No such member in this account.');
  return member;
}

/** Locks a member whom an admin may change: any but the owner (`ownerRefusal` says why not). */
async function lockNonOwner(db: Db, accountId: number, userId: number, ownerRefusal: string) {
  const member = await lockMemberOf(db, accountId, userId);
  if (member.role === 'owner') throw new AppError('conflict', ownerRefusal);
  return member;
}

/** Owner rules: the owner's role changes only by a transfer, and only the owner may transfer. */
export async function changeMemberRole(by: AuditBy, actor: Actor, input: { userId: unknown; role: unknown }) {
  requireRole(actor, 'team.manage');
  const v = validate(ChangeRoleInput, input);
  const db = await getDb();
  return db.transaction(async (tx) => {
    const member = await lockNonOwner(asDb(tx), actor.accountId, v.userId, 'The owner keeps their role until they transfer ownership.');
    await setMemberRole(asDb(tx), actor.accountId, v.userId, v.role);
    if (member.role !== v.role) await recordAudit(asDb(tx), actor.accountId, by, 'member.role_changed', `${member.email}: ${member.role} → ${v.role}`);
    return { user_id: v.userId, role: v.role };
  });
}

/** The invalidation topic of a removed member (id: the user id): their live sockets close. */
export const MEMBER_TOPIC = 'member';

/** Removes a member: their session rows go with them, so every instance refuses them at the next request. */
export async function removeMember(by: AuditBy, actor: Actor, input: { userId: unknown }) {
  requireRole(actor, 'team.manage');
  const v = validate(MemberIdInput, input);
  const db = await getDb();
  const removed = await db.transaction(async (tx) => {
    const member = await lockNonOwner(asDb(tx), actor.accountId, v.userId, 'The owner cannot be removed; they transfer ownership first.');
    // What they invited leaves with them: an admin removed for cause cannot come back through a pending link.
    await revokeInvitationsBy(asDb(tx), actor.accountId, v.userId);
    await deleteMember(asDb(tx), actor.accountId, v.userId);
    await recordAudit(asDb(tx), actor.accountId, by, 'member.removed', member.email);
    return { user_id: v.userId, removed: true as const };
  });
  await publishInvalidation(MEMBER_TOPIC, String(v.userId)); // open inbox sockets close at once, everywhere
  return removed;
}

/** The owner hands ownership to another member and becomes an admin. */
export async function transferOwnership(by: AuditBy, actor: Actor, input: { userId: unknown }) {
  requireRole(actor, 'team.own');
  const v = validate(MemberIdInput, input);
  if (v.userId === actor.userId) throw new AppError('conflict', 'You already own this account.');
  const db = await getDb();
  return db.transaction(async (tx) => {
    await lockAccountForWrite(asDb(tx), actor.accountId);
    const member = await lockMemberOf(asDb(tx), actor.accountId, v.userId);
    const owner = await getAccountOwner(asDb(tx), actor.accountId);
    if (owner?.id !== actor.userId) throw new AppError('forbidden', 'Only the owner transfers ownership.');
    await setMemberRole(asDb(tx), actor.accountId, actor.userId, 'admin');
    await setMemberRole(asDb(tx), actor.accountId, v.userId, 'owner');
    await recordAudit(asDb(tx), actor.accountId, by, 'account.ownership_transferred', `${actor.email} → ${member.email}`);
    return { owner_user_id: v.userId };
  });
}

export async function setRequireTwoFactor(by: AuditBy, actor: Actor, on: boolean) {
  requireRole(actor, 'team.own');
  const db = await getDb();
  await db.transaction(async (tx) => {
    const was = (await getTeamSettings(asDb(tx), actor.accountId)).requireTwoFactor;
    await setRequireTwoFactorRow(asDb(tx), actor.accountId, on);
    if (was !== on) await recordAudit(asDb(tx), actor.accountId, by, 'account.two_factor_required_changed', on ? 'required' : 'not required');
  });
  if (on) await sessionsOfAccountChanged(actor.accountId); // members without two-factor leave the inbox now
  return { require_two_factor: on };
}

/** The invitation behind a link, for the accept page; null when unknown, used, revoked or expired. */
export async function getInvitationByToken(token: string) {
  if (!LINK_TOKEN_RE.test(token)) return null;
  const db = await getDb();
  const inv = await getPendingInvitationByHash(db, hashLinkToken(token));
  if (!inv) return null;
  const account = await getAccountById(db, inv.accountId);
  return { email: inv.email, role: inv.role, accountName: account?.name ?? '' };
}

/**
 * Accepts an invitation once: creates the member and returns a sign-in ticket the browser
 * exchanges for a session. A used, revoked, expired or forged link is a 404.
 */
export async function acceptInvitation(token: string, input: { name: unknown; password: unknown }, ip: string) {
  await limitPasswordForm(ip);
  const v = validate(AcceptInvitationInput, input);
  const gone = () => new AppError('not_found', 'This invitation link is not valid any more (used, revoked or expired); ask for a new one.');
  // The token first: a forged, used or revoked link never costs a hash.
  if (!LINK_TOKEN_RE.test(token)) throw gone();
  const db = await getDb();
  if (!(await getPendingInvitationByHash(db, hashLinkToken(token)))) throw gone();
  const passwordHash = await hashPassword(v.password);
  const user = await db.transaction(async (tx) => {
    const inv = await getPendingInvitationByHash(asDb(tx), hashLinkToken(token));
    if (!inv || !(await markInvitationAccepted(asDb(tx), inv.id))) throw gone();
    const created = await insertAdminUser(asDb(tx), inv.accountId, inv.email, passwordHash, { role: inv.role, name: v.name });
    if (!created) throw new AppError('conflict', `${inv.email} already belongs to a user; sign in instead.`);
    await recordAudit(asDb(tx), inv.accountId, memberBy(inv.email, ip), 'member.joined', `${inv.email} as ${inv.role}`);
    return created;
  });
  return { user_id: user.id, email: user.email, ticket: signTicket(user.id, 'sign_in', 120) };
}

/** The operator's view of an account's members (CLI `member list`, docs/contracts.md §13). */
export async function listAccountMembers(accountId: number) {
  const db = await getDb();
  if (!(await getAccountById(db, accountId))) throw new AppError('not_found', `No account with id ${accountId}.`);
  const members = await listMembers(db, accountId);
  return { members: members.map((m) => ({ user_id: m.id, email: m.email, name: m.name, role: m.role, two_factor: m.twoFactor })) };
}
