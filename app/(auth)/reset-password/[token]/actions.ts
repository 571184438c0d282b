'use server';
import { headers } from 'next/headers';
import { resetPassword } from '@/lib/team/password-reset';
import { actionResult } from '@/lib/dashboard/action-result';
import { PEER_IP_HEADER } from '@/lib/net/client-address';

export async function resetPasswordAction(token: string, _prev: unknown, form: FormData) {
  const ip = (await headers()).get(PEER_IP_HEADER) ?? 'unknown';
  return actionResult(() => resetPassword(token, { password: form.get('password') }, ip));
}
