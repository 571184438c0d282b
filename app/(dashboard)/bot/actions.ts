'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { updateBotSettings } from '@/lib/bot/settings';
import { actionResult } from '@/lib/dashboard/action-result';
import { tryQuestion } from '@/lib/dashboard/knowledge';

export async function saveBotSettingsAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('bot.manage');
    const saved = await updateBotSettings(by, accountId, {
      instructions: String(form.get('instructions') ?? ''),
      noAnswerText: String(form.get('noAnswerText') ?? ''),
      model: String(form.get('model') ?? ''),
      showSources: form.get('showSources') === 'on',
    });
    revalidatePath('/bot');
    return { saved };
  });
}

export async function tryBotQuestionAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId } = await requireMember('knowledge.read');
    return tryQuestion(accountId, String(form.get('question') ?? ''));
  });
}
