import { getDb } from '../../db/client';
import { countAttachmentDocuments, getAttachmentForAccount, insertAttachedFile, insertUploadOnce, type UploadRow } from '../../db/queries/uploads';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { addKnowledgeDocument } from '../knowledge/service';
import { getLimiter } from '../limits/limiter';
import { DOCX_TYPE } from '../documents/sniff';
import { CHUNK_BYTES, readUploadBytes, uploadByteStream } from './storage';
import { isUuid } from '../core/validation';
import { quotaFull, safeFilename, tooLarge, typeByContent } from './rules';

export const UPLOAD_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', DOCX_TYPE, 'text/plain', 'text/markdown', 'text/csv'];

export function uploadLimits() {
  return { upload_max_bytes: getEnv().UPLOAD_MAX_BYTES, upload_types: UPLOAD_TYPES };
}

/** RFC 8187 ext-value characters: everything else is percent-encoded (encodeURIComponent leaves ' ( ) * as they are). */
function extValue(text: string): string {
  return encodeURIComponent(text.toWellFormed()).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<exact name>` (RFC 6266): the quoted
 * fallback holds printable ASCII only (no quote, backslash or control character), for old clients.
 */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_').trim() || 'download';
  return `attachment; filename="${fallback}"; filename*=UTF-8''${extValue(filename)}`;
}

/**
 * The download of one attachment of the account (GET /customer-api/v2/attachments/{id} and the
 * dashboard's link): its stored type, an attachment disposition, no sniffing, no caching, and
 * the bytes streamed a chunk row at a time at the reader's pace (never the whole file in memory).
 * Another account's id, an unknown id and an unfinished upload are the same 404.
 */
export async function attachmentDownload(accountId: number, attachmentId: string): Promise<Response> {
  const notFound = () => new AppError('not_found', `No attachment with id ${attachmentId.slice(0, 100)}.`);
  if (!isUuid(attachmentId)) throw notFound();
  const db = await getDb();
  const file = await getAttachmentForAccount(db, accountId, attachmentId.toLowerCase());
  if (!file) throw notFound();
  return new Response(uploadByteStream(db, accountId, file.id), {
    status: 200,
    headers: {
      'Content-Type': file.content_type,
      'Content-Length': String(file.size),
      'Content-Disposition': contentDisposition(file.filename),
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, no-store',
    },
  });
}

/**
 * Attaches a file that is already in memory (small: the demo's) to the user message of a
 * conversation of the account, in the same chunk rows widget uploads use. Returns its id.
 */
export async function attachFileToMessage(
  accountId: number,
  v: {
    conversationId: string;
    messageId: string;
    filename: string;
    contentType: string;
    bytes: Buffer;
  },
): Promise<string> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < v.bytes.length; at += CHUNK_BYTES) chunks.push(v.bytes.subarray(at, at + CHUNK_BYTES));
  return insertAttachedFile(await getDb(), accountId, { ...v, chunks });
}

/**
 * A file already in memory (a mail's attachment) stored as an upload of the visitor by the same
 * rules and in the same chunk rows as the widget's (./rules.ts: type by content, UPLOAD_MAX_BYTES,
 * the account's quota), ready to attach to their message. `id` is the caller's, derived from what
 * the file came with, so storing it again (a mail processed twice) returns the stored upload. A
 * refusal throws the rules' AppError (unsupported_media_type, payload_too_large) and stores nothing.
 */
export async function storeUploadBytes(accountId: number, v: { id: string; visitorId: string; filename: string; bytes: Uint8Array }): Promise<UploadRow> {
  const env = getEnv();
  const filename = safeFilename(v.filename);
  if (v.bytes.byteLength > env.UPLOAD_MAX_BYTES) throw tooLarge(env.UPLOAD_MAX_BYTES, filename);
  const contentType = await typeByContent([v.bytes], filename, async () => {});
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < v.bytes.byteLength; at += CHUNK_BYTES) chunks.push(v.bytes.subarray(at, at + CHUNK_BYTES));
  const r = await insertUploadOnce(
    await getDb(),
    accountId,
    { id: v.id, visitorId: v.visitorId, filename, contentType, chunks },
    env.UPLOAD_QUOTA_BYTES_PER_ACCOUNT,
  );
  if ('usedBytes' in r) throw quotaFull(r.usedBytes, env.UPLOAD_QUOTA_BYTES_PER_ACCOUNT, filename);
  return r.upload;
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
    const daily =
      perDay > 0 ? await getLimiter('attachment-documents-account', { points: perDay, durationSeconds: 86400 }).consume(String(accountId)) : { allowed: false };
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
