'use server';
import { headers } from 'next/headers';
import { requestPasswordReset } from '@/lib/team/password-reset';
import { actionResult } from '@/lib/dashboard/action-result';
import { PEER_IP_HEADER } from '@/lib/net/client-address';

export async function requestResetAction(_prev: unknown, form: FormData) {
  const ip = (await headers()).get(PEER_IP_HEADER) ?? 'unknown';
  return actionResult(() => requestPasswordReset({ email: form.get('email') }, ip));
}
