'use server';
import { revalidatePath } from 'next/cache';
import { AppError } from '@/lib/core/errors';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { addKnowledgeDocument, removeKnowledgeDocument } from '@/lib/knowledge/service';

export async function uploadDocumentAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId } = await requireMember('knowledge.write');
    const file = form.get('file');
    if (!(file instanceof File) || file.size === 0) throw new AppError('invalid_request', 'Choose a file to upload.');
    const doc = await addKnowledgeDocument(accountId, file.name, new Uint8Array(await file.arrayBuffer()));
    revalidatePath('/knowledge');
    return { filename: file.name, chunks: doc.chunks };
  });
}

export async function deleteDocumentAction(documentId: string) {
  return actionResult(async () => {
    const { accountId } = await requireMember('knowledge.write');
    await removeKnowledgeDocument(accountId, documentId);
    revalidatePath('/knowledge');
    return {};
  });
}
