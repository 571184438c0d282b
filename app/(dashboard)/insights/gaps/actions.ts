'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { answerContentGap, dismissContentGap, parseGapQuestions } from '@/lib/insights/gaps';
import { addSuggestedSynonym } from '@/lib/insights/synonym-suggestions';

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

export async function addSuggestedSynonymAction(word: string, synonym: string) {
  return actionResult(async () => {
    const { accountId } = await requireMember('knowledge.write');
    const group = await addSuggestedSynonym(accountId, { word: String(word), synonym: String(synonym) });
    revalidatePath('/insights/gaps');
    revalidatePath('/knowledge');
    return { words: group.words };
  });
}
