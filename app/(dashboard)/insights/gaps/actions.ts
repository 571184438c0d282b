'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { answerContentGap, dismissContentGap, parseGapQuestions } from '@/lib/insights/gaps';

export async function saveGapAnswerAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId } = await requireMember('knowledge.write');
    const saved = await answerContentGap(accountId, { questions: parseGapQuestions(form.get('questions')), answer: String(form.get('answer') ?? '') });
    revalidatePath('/insights/gaps');
    return { id: saved.id };
  });
}

export async function dismissGapAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId } = await requireMember('knowledge.write');
    await dismissContentGap(accountId, parseGapQuestions(form.get('questions')));
    revalidatePath('/insights/gaps');
    return {};
  });
}
