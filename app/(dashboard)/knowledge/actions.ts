'use server';
import { revalidatePath } from 'next/cache';
import { AppError } from '@/lib/core/errors';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { removeKnowledgeDocument, restoreKnowledgeVersion, uploadKnowledgeDocument } from '@/lib/knowledge/service';
import { removeWebsite, resyncWebsite, startWebsiteImport } from '@/lib/knowledge/sites';
import { addSynonymGroup, removeSynonymGroup } from '@/lib/knowledge/synonyms';
import { editCuratedAnswer, removeCuratedAnswer } from '@/lib/knowledge/curated';

async function writer() {
  const { accountId } = await requireMember('knowledge.write');
  return accountId;
}

/** Uploads a document; one whose title or file name exists comes back as `existing` until sent with `replace`. */
export async function uploadDocumentAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const accountId = await writer();
    const file = form.get('file');
    if (!(file instanceof File) || file.size === 0) throw new AppError('invalid_request', 'Choose a file to upload.');
    const replace = form.get('replace');
    const result = await uploadKnowledgeDocument(
      accountId,
      file.name,
      new Uint8Array(await file.arrayBuffer()),
      typeof replace === 'string' && replace ? replace : null,
    );
    revalidatePath('/knowledge');
    return { filename: file.name, ...result };
  });
}

export async function deleteDocumentAction(documentId: string) {
  return actionResult(async () => {
    await removeKnowledgeDocument(await writer(), documentId);
    revalidatePath('/knowledge');
    return {};
  });
}

export async function restoreVersionAction(documentId: string) {
  return actionResult(async () => {
    await restoreKnowledgeVersion(await writer(), documentId);
    revalidatePath('/knowledge');
    return {};
  });
}

export async function importWebsiteAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const site = await startWebsiteImport(await writer(), String(form.get('url') ?? ''));
    revalidatePath('/knowledge');
    return { url: site.url };
  });
}

export async function resyncWebsiteAction(siteId: string) {
  return actionResult(async () => {
    await resyncWebsite(await writer(), siteId);
    revalidatePath('/knowledge');
    return {};
  });
}

export async function removeWebsiteAction(siteId: string) {
  return actionResult(async () => {
    await removeWebsite(await writer(), siteId);
    revalidatePath('/knowledge');
    return {};
  });
}

export async function addSynonymsAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const group = await addSynonymGroup(await writer(), String(form.get('words') ?? ''));
    revalidatePath('/knowledge');
    return { words: group.words };
  });
}

export async function removeSynonymsAction(groupId: string) {
  return actionResult(async () => {
    await removeSynonymGroup(await writer(), groupId);
    revalidatePath('/knowledge');
    return {};
  });
}

export async function editCuratedAction(id: string, _prev: unknown, form: FormData) {
  return actionResult(async () => {
    const questions = String(form.get('questions') ?? '').split('\n');
    await editCuratedAnswer(await writer(), id, { questions, answer: String(form.get('answer') ?? '') });
    revalidatePath('/knowledge');
    return {};
  });
}

export async function removeCuratedAction(id: string) {
  return actionResult(async () => {
    await removeCuratedAnswer(await writer(), id);
    revalidatePath('/knowledge');
    return {};
  });
}
