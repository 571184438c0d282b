import { getDb } from '../../db/client';
import { countAttachmentDocuments, getAttachmentForAccount, type UploadRow } from '../../db/queries/uploads';
import { AppError } from '../api/errors';
import { getEnv } from '../env';
import { addKnowledgeDocument } from '../knowledge/service';
import { getLimiter } from '../limits/limiter';
import { DOCX_TYPE } from './sniff';
import { readUploadBytes, uploadByteStream } from './storage';

export const UPLOAD_TYPES = [
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', DOCX_TYPE, 'text/plain', 'text/markdown', 'text/csv',
];

export function uploadLimits() {
  return { upload_max_bytes: getEnv().UPLOAD_MAX_BYTES, upload_types: UPLOAD_TYPES };
}

/** An attachment of the account and its bytes as a stream (read a chunk at a time from the database). */
export async function openAttachment(accountId: number, attachmentId: string) {
  if (!/^[0-9a-f-]{36}$/i.test(attachmentId)) throw new AppError('not_found', 'No such attachment.');
  const db = await getDb();
  const file = await getAttachmentForAccount(db, accountId, attachmentId.toLowerCase());
  if (!file) throw new AppError('not_found', 'No such attachment.');
  return { file, body: uploadByteStream(db, accountId, file.id) };
}

/**
 * Documents a visitor attached to a question become answerable in that conversation. Capped: at
 * most ATTACHMENT_DOCUMENTS_PER_CONVERSATION per conversation and ATTACHMENT_DOCUMENTS_PER_ACCOUNT_PER_DAY
 * per account; beyond, the attachment stays attached (the admin sees it) but is not indexed.
 * A document that cannot be read is logged, never fatal to the question.
 */
export async function indexAttachedDocuments(accountId: number, conversationId: string, uploads: UploadRow[]): Promise<number> {
  const documents = uploads.filter((u) => !u.content_type.startsWith('image/'));
  if (documents.length === 0) return 0;
  const env = getEnv();
  const db = await getDb();
  let inConversation = await countAttachmentDocuments(db, accountId, conversationId);
  let indexed = 0;
  for (const u of documents) {
    if (inConversation >= env.ATTACHMENT_DOCUMENTS_PER_CONVERSATION) {
      console.warn(`attachment ${u.id} not indexed: conversation ${conversationId} already has ${inConversation} attached documents`);
      continue;
    }
    const perDay = env.ATTACHMENT_DOCUMENTS_PER_ACCOUNT_PER_DAY;
    const daily = perDay > 0
      ? await getLimiter('attachment-documents-account', { points: perDay, durationSeconds: 86400 }).consume(String(accountId))
      : { allowed: false };
    if (!daily.allowed) {
      console.warn(`attachment ${u.id} not indexed: account ${accountId} reached ${perDay} attached documents today`);
      continue;
    }
    try {
      await addKnowledgeDocument(accountId, u.filename, await readUploadBytes(db, accountId, u.id), { conversationId, attachmentId: u.id });
      inConversation++;
      indexed++;
    } catch (e) {
      console.error(`attachment ${u.id} not indexed:`, (e as Error).message);
    }
  }
  return indexed;
}
