'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { saveRetention } from '@/lib/privacy/retention';
import { eraseVisitorAs, findVisitorAs } from '@/lib/privacy/visitor';

/** A form's days as the service's schema reads them: a whole number, else the text (refused with its reason). */
function daysOf(raw: FormDataEntryValue | null): number | string {
  const text = typeof raw === 'string' ? raw.trim() : '';
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

export async function saveRetentionAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const member = await requireMember('privacy.manage');
    const saved = await saveRetention(member, { days: form.get('enabled') === 'on' ? daysOf(form.get('days')) : null });
    revalidatePath('/privacy');
    return saved;
  });
}

export async function findVisitorAction(visitor: string) {
  return actionResult(async () => findVisitorAs(await requireMember('privacy.manage'), visitor));
}

export async function eraseVisitorAction(visitor: string) {
  return actionResult(async () => eraseVisitorAs(await requireMember('privacy.manage'), visitor));
}
