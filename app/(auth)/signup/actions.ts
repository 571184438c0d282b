'use server';
import { headers } from 'next/headers';
import { actionResult } from '@/lib/dashboard/action-result';
import { PEER_IP_HEADER } from '@/lib/net/client-address';
import { confirmSignup, requestSignup } from '@/lib/team/signup';

export async function signupAction(_prev: unknown, form: FormData) {
  const ip = (await headers()).get(PEER_IP_HEADER) ?? 'unknown';
  return actionResult(() => requestSignup({ accountName: form.get('accountName'), email: form.get('email'), password: form.get('password') }, ip));
}

export async function confirmSignupAction(token: string) {
  return actionResult(async () => ({ ticket: (await confirmSignup(token)).ticket }));
}
