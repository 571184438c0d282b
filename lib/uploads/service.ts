import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { getDb } from '../../db/client';
import { insertUpload } from '../../db/queries/uploads';
import { AppError } from '../api/errors';
import { RateLimiter } from '../api/rate-limit';
import type { WidgetClaims } from '../auth/widget-tokens';
import { getEnv } from '../env';
import { sniffType } from './sniff';

export const UPLOAD_TYPES = [
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'text/plain', 'text/markdown', 'text/csv',
];

export function uploadLimits() {
  return { upload_max_bytes: getEnv().UPLOAD_MAX_BYTES, upload_types: UPLOAD_TYPES };
}

export function uploadsDir(): string {
  return path.resolve(getEnv().DATA_DIR, 'uploads');
}

const LIMIT = Symbol.for('svc.uploadRateLimit');
function limiter(): RateLimiter {
  const holder = globalThis as { [LIMIT]?: RateLimiter };
  holder[LIMIT] ??= new RateLimiter(getEnv().UPLOADS_PER_VISITOR_PER_MINUTE, 60_000);
  return holder[LIMIT];
}

/** Rejects a body that announces more than the limit before reading it (plus multipart overhead). */
export function checkDeclaredLength(contentLength: string | null): void {
  const max = getEnv().UPLOAD_MAX_BYTES;
  if (contentLength && Number(contentLength) > max + 64 * 1024) {
    throw new AppError('payload_too_large', `Files may be at most ${max} bytes.`);
  }
}

/** Stores one visitor upload under a generated name; the type is decided by the bytes. */
export async function storeUpload(claims: WidgetClaims, file: File) {
  limiter().enforce(claims.visitorId, 'uploads');
  const max = getEnv().UPLOAD_MAX_BYTES;
  if (file.size > max) throw new AppError('payload_too_large', `Files may be at most ${max} bytes; this one has ${file.size}.`);
  const buf = new Uint8Array(await file.arrayBuffer());
  const filename = (file.name || 'upload').replace(/[\u0000-\u001f\u007f/\\]/g, '_').slice(-200);
  const sniffed = sniffType(buf, filename);
  if ('rejected' in sniffed) throw new AppError('unsupported_media_type', `${filename}: ${sniffed.rejected}. Allowed: PNG, JPEG, GIF, WebP, PDF, DOCX, text, Markdown, CSV.`);
  const id = randomUUID();
  const dir = uploadsDir();
  fs.mkdirSync(dir, { recursive: true });
  const storageName = `${id}.bin`;
  const tmp = path.join(dir, `${storageName}.part`);
  fs.writeFileSync(tmp, buf);
  fs.renameSync(tmp, path.join(dir, storageName));
  try {
    await insertUpload(await getDb(), claims.accountId, {
      id, clientId: claims.clientId, visitorId: claims.visitorId, filename, contentType: sniffed.contentType, size: buf.length, storageName,
    });
  } catch (e) {
    fs.rmSync(path.join(dir, storageName), { force: true });
    throw e;
  }
  return { upload_id: id, filename, content_type: sniffed.contentType, size: buf.length };
}

export function readStoredUpload(storageName: string): Buffer {
  return fs.readFileSync(path.join(uploadsDir(), path.basename(storageName)));
}
