'use server';
import { revalidatePath } from 'next/cache';
import { saveModelEndpoint, testModelEndpoint } from '@/lib/answers/model-endpoint';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';

const endpointFields = (form: FormData) => ({
  baseUrl: String(form.get('baseUrl') ?? ''),
  apiKey: String(form.get('apiKey') ?? ''),
  clearKey: form.get('clearKey') === 'on',
  embeddingModel: String(form.get('embeddingModel') ?? ''),
});

export async function saveModelEndpointAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('bot.manage');
    const saved = await saveModelEndpoint(by, accountId, endpointFields(form));
    revalidatePath('/bot');
    return { saved };
  });
}

export async function testModelEndpointAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId } = await requireMember('bot.manage');
    return testModelEndpoint(accountId, endpointFields(form));
  });
}
