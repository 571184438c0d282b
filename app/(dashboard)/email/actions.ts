'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { regenerateAddress, saveEmailSettings } from '@/lib/email/settings';
import { sendTestEmail } from '@/lib/email/test-mail';

export async function saveEmailSettingsAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const member = await requireMember('email.manage');
    const saved = await saveEmailSettings(member.by, member, { ai_answers: form.get('aiAnswers') === 'on', acknowledge: form.get('acknowledge') === 'on' });
    revalidatePath('/email');
    return { saved };
  });
}

export async function regenerateAddressAction() {
  return actionResult(async () => {
    const member = await requireMember('email.manage');
    const { address } = await regenerateAddress(member.by, member);
    revalidatePath('/email');
    return { address };
  });
}

export async function sendTestEmailAction() {
  return actionResult(async () => {
    const member = await requireMember('email.manage');
    const { received_at } = await sendTestEmail(member.by, member);
    revalidatePath('/email');
    return { received_at };
  });
}
