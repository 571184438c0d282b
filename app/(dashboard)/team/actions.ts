'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { changeMemberRole, inviteMember, removeMember, revokeInvitation, setRequireTwoFactor, transferOwnership } from '@/lib/team/service';

const done = <T extends object>(v: T) => {
  revalidatePath('/team');
  return v;
};

export async function inviteMemberAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const actor = await requireMember('team.manage');
    return done(await inviteMember(actor.by, actor, { email: form.get('email'), role: form.get('role') }));
  });
}

export async function changeRoleAction(userId: number, role: string) {
  return actionResult(async () => {
    const m = await requireMember('team.manage');
    return done(await changeMemberRole(m.by, m, { userId, role }));
  });
}

export async function removeMemberAction(userId: number) {
  return actionResult(async () => {
    const m = await requireMember('team.manage');
    return done(await removeMember(m.by, m, { userId }));
  });
}

export async function revokeInvitationAction(id: string) {
  return actionResult(async () => {
    const m = await requireMember('team.manage');
    return done(await revokeInvitation(m.by, m, { id }));
  });
}

export async function transferOwnershipAction(userId: number) {
  return actionResult(async () => {
    const m = await requireMember('team.own');
    return done(await transferOwnership(m.by, m, { userId }));
  });
}

export async function requireTwoFactorAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const m = await requireMember('team.own');
    return done(await setRequireTwoFactor(m.by, m, form.get('require') === 'on'));
  });
}
