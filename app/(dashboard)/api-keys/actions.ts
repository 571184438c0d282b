'use server';
import { revalidatePath } from 'next/cache';
import { createApiKey, revokeApiKey } from '@/lib/accounts/service';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { getEnv } from '@/lib/env';

export async function createKeyAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('api_keys.manage');
    const key = await createApiKey(by, { accountId, name: String(form.get('name') ?? ''), env: getEnv().SVC_ENV });
    revalidatePath('/api-keys');
    return { key: key.key, keyId: key.key_id };
  });
}

export async function revokeKeyAction(keyId: string) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('api_keys.manage');
    await revokeApiKey(by, accountId, keyId);
    revalidatePath('/api-keys');
    return {};
  });
}
