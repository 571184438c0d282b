'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { addAnswerTest, importAnswerTestsCsv, removeAnswerTest, runAnswerTests } from '@/lib/answer-tests/service';
import type { AnswerTestInput } from '@/lib/answer-tests/contract';
import { actionResult } from '@/lib/dashboard/action-result';

export async function addAnswerTestAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const member = await requireMember('bot.manage');
    const expect = String(form.get('expect') ?? '');
    const added = await addAnswerTest(member, {
      question: String(form.get('question') ?? ''),
      expect: expect as AnswerTestInput['expect'],
      value: expect === 'mentions' ? String(form.get('text') ?? '') : '',
      source: expect === 'answers from' ? String(form.get('source') ?? '') : undefined,
    });
    revalidatePath('/bot/tests');
    return { added };
  });
}

export async function runAnswerTestsAction() {
  return actionResult(async () => {
    const run = await runAnswerTests(await requireMember('bot.manage'));
    revalidatePath('/bot/tests');
    revalidatePath('/knowledge');
    return { passed: run.passed, failed: run.failed };
  });
}

export async function removeAnswerTestAction(id: string) {
  return actionResult(async () => {
    const removed = await removeAnswerTest(await requireMember('bot.manage'), id);
    revalidatePath('/bot/tests');
    return removed;
  });
}

export async function importAnswerTestsAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const member = await requireMember('bot.manage');
    const file = form.get('file');
    const text = file instanceof File ? await file.text() : '';
    const imported = await importAnswerTestsCsv(member, text);
    revalidatePath('/bot/tests');
    return imported;
  });
}
