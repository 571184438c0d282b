'use server';
import { headers } from 'next/headers';
import { revalidatePath } from 'next/cache';
import { getDashboardSession } from '@/lib/auth/session';
import { beginTwoFactorSetup, confirmTwoFactorSetup, turnOffTwoFactor } from '@/lib/auth/two-factor';
import { AppError } from '@/lib/core/errors';
import { actionResult } from '@/lib/dashboard/action-result';
import { PEER_IP_HEADER } from '@/lib/net/client-address';
import { changeMyPassword, setMyEmailNotifications, updateMyName } from '@/lib/team/profile';

/** The profile is every member's own, and the one page open before a required two-factor set-up. */
async function me() {
  const session = await getDashboardSession();
  if (!session) throw new AppError('unauthorized', 'Your session has ended; sign in again.');
  return session;
}
const ip = async () => (await headers()).get(PEER_IP_HEADER) ?? 'unknown';

export async function saveNameAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const r = await updateMyName(await me(), { name: form.get('name') });
    revalidatePath('/profile');
    return r;
  });
}

export async function changePasswordAction(_prev: unknown, form: FormData) {
  return actionResult(async () => changeMyPassword(await me(), { current: form.get('current'), password: form.get('password') }));
}

export async function beginTwoFactorAction(form: FormData) {
  return actionResult(async () => beginTwoFactorSetup(await me(), form.get('password'), await ip()));
}

export async function confirmTwoFactorAction(_prev: unknown, form: FormData) {
  return actionResult(async () => confirmTwoFactorSetup(await me(), form.get('code'), await ip()));
}

export async function turnOffTwoFactorAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const r = await turnOffTwoFactor(await me(), form.get('code'), await ip());
    revalidatePath('/profile');
    return r;
  });
}

export async function saveNotificationsAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const r = await setMyEmailNotifications(await me(), { notify_email: form.get('notifyEmail') === 'on' });
    revalidatePath('/profile');
    return r;
  });
}
