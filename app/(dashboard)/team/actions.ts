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
    return done(await inviteMember(actor, { email: form.get('email'), role: form.get('role') }));
  });
}

export async function changeRoleAction(userId: number, role: string) {
  return actionResult(async () => done(await changeMemberRole(await requireMember('team.manage'), { userId, role })));
}

export async function removeMemberAction(userId: number) {
  return actionResult(async () => done(await removeMember(await requireMember('team.manage'), { userId })));
}

export async function revokeInvitationAction(id: string) {
  return actionResult(async () => done(await revokeInvitation(await requireMember('team.manage'), { id })));
}

export async function transferOwnershipAction(userId: number) {
  return actionResult(async () => done(await transferOwnership(await requireMember('team.own'), { userId })));
}

export async function requireTwoFactorAction(_prev: unknown, form: FormData) {
  return actionResult(async () => done(await setRequireTwoFactor(await requireMember('team.own'), form.get('require') === 'on')));
}
