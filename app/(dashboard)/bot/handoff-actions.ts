'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { WEEKDAYS } from '@/lib/conversations/handoff-contract';
import { actionResult } from '@/lib/dashboard/action-result';
import { saveHandoffForm } from '@/lib/dashboard/handoff-settings';

export async function saveHandoffSettingsAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const member = await requireMember('bot.manage');
    const saved = await saveHandoffForm(member.by, member, {
      enabled: form.get('enabled') === 'on',
      timeZone: String(form.get('timeZone') ?? ''),
      days: WEEKDAYS.map((_, i) => ({
        open: form.get(`open-${i}`) === 'on',
        opens: String(form.get(`opens-${i}`) ?? ''),
        closes: String(form.get(`closes-${i}`) ?? ''),
      })),
      awayText: String(form.get('awayText') ?? ''),
    });
    revalidatePath('/bot');
    return { saved };
  });
}
