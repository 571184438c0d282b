'use server';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { deleteAccountAsOwner } from '@/lib/privacy/account-deletion';

/** "Delete account" on /privacy: the owner only (403 for the other roles); the page then signs out. */
export async function deleteAccountAction(_prev: unknown, form: FormData) {
  return actionResult(async () => deleteAccountAsOwner(await requireMember('account.delete'), form.get('confirm')));
}
