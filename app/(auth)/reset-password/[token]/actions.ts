'use server';
import { resetPassword } from '@/lib/team/password-reset';
import { actionResult } from '@/lib/dashboard/action-result';

export async function resetPasswordAction(token: string, _prev: unknown, form: FormData) {
  return actionResult(() => resetPassword(token, { password: form.get('password') }));
}
