'use server';
import { actionResult } from '@/lib/dashboard/action-result';
import { confirmSignup, requestSignup } from '@/lib/team/signup';

export async function signupAction(_prev: unknown, form: FormData) {
  return actionResult(() => requestSignup({ accountName: form.get('accountName'), email: form.get('email'), password: form.get('password') }));
}

export async function confirmSignupAction(token: string) {
  return actionResult(async () => ({ ticket: (await confirmSignup(token)).ticket }));
}
