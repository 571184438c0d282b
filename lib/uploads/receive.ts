import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import { getDb } from '../../db/client';
import { completeUpload, deleteUpload, reserveUpload } from '../../db/queries/uploads';
import { AppError } from '../core/errors';
import { clientIp } from '../api/widget-route';
import { requireWidgetToken } from '../auth/widget-request';
import type { WidgetClaims } from '../auth/widget-tokens';
import { getEnv } from '../env';
import { getLimiter } from '../limits/limiter';
import { quotaFull, safeFilename, tooLarge, typeByContent } from './rules';
import { ChunkWriter } from './storage';

/** Room for the multipart framing around the file (boundaries, part headers). */
const MULTIPART_SLACK = 16 * 1024;
/**
 * After a refusal mid-body the rest of the body is read and dropped before the answer is sent, for
 * at most this long or this much. Next cancels the request body once the response is sent, and a
 * socket closed with unread bytes is reset, which can destroy the answer before the client, still
 * sending, reads it; a finite body is therefore drained first (it costs time, never memory).
 */
const DISCARD_MS = 10_000;
const DISCARD_BYTES = 1024 * 1024 * 1024;

export type UploadInfo = { upload_id: string; filename: string; content_type: string; size: number };

const badForm = (detail: string) => new AppError('invalid_request', `${detail} Send multipart/form-data with one file in the field "file".`);

/**
 * Per visitor, per address and per client (docs/contracts.md §6, issue 9): a fresh visitor id still
 * meets the address and client budgets. Charged in that order, after the token was verified, so
 * an anonymous flood never reaches the client's shared bucket.
 */
async function chargeUploadLimits(claims: WidgetClaims, ip: string): Promise<void> {
  const env = getEnv();
  await getLimiter('uploads-visitor', { points: env.UPLOADS_PER_VISITOR_PER_MINUTE, durationSeconds: 60 }).enforce(
    `${claims.clientId}:${claims.visitorId}`,
    'uploads from this visitor',
  );
  await getLimiter('uploads-ip', { points: env.UPLOADS_PER_IP_PER_MINUTE, durationSeconds: 60 }).enforce(ip, 'uploads from this address');
  await getLimiter('uploads-client', { points: env.UPLOADS_PER_CLIENT_PER_MINUTE, durationSeconds: 60 }).enforce(
    claims.clientId,
    'uploads through this widget',
  );
}

function declaredLength(value: string | null): number | null {
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

/**
 * POST /api/widget/uploads: the multipart body is parsed as it streams (busboy) and the file
 * goes straight into the database in chunks, with the byte limit enforced on the stream (with or
 * without Content-Length). The type is decided by the first bytes; text is checked to its end.
 * Any refusal deletes what was written: a refused upload leaves nothing behind.
 */
export async function receiveUpload(req: Request): Promise<UploadInfo> {
  const claims = await requireWidgetToken(req);
  const env = getEnv();
  const max = env.UPLOAD_MAX_BYTES;
  const contentType = req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType) || !req.body) throw badForm('This is not a multipart body.');
  const declared = declaredLength(req.headers.get('content-length'));
  if (declared !== null && declared > max + MULTIPART_SLACK) throw tooLarge(max);
  await chargeUploadLimits(claims, clientIp(req));

  const db = await getDb();
  const id = randomUUID();
  const reserveBytes = Math.min(max, declared ?? max);
  const reservation = await reserveUpload(
    db,
    claims.accountId,
    {
      id,
      clientId: claims.clientId,
      visitorId: claims.visitorId,
      filename: 'upload',
      reserveBytes,
    },
    env.UPLOAD_QUOTA_BYTES_PER_ACCOUNT,
  );
  if (!reservation.reserved) {
    throw quotaFull(reservation.usedBytes, env.UPLOAD_QUOTA_BYTES_PER_ACCOUNT);
  }
  try {
    const writer = new ChunkWriter(db, id);
    const file = await parseOneFile(req.body, contentType, max, (stream, name) => storeFile(stream, safeFilename(name), writer));
    await completeUpload(db, claims.accountId, id, { filename: file.filename, contentType: file.contentType, size: writer.bytes });
    return { upload_id: id, filename: file.filename, content_type: file.contentType, size: writer.bytes };
  } catch (e) {
    await deleteUpload(db, claims.accountId, id).catch((err) => console.error(`upload ${id}: could not delete after refusal:`, (err as Error).message));
    throw e;
  }
}

/** Reads the file part by the upload rules (./rules.ts: type by content, text to its end), writing every byte. */
async function storeFile(stream: Readable, filename: string, writer: ChunkWriter): Promise<{ filename: string; contentType: string }> {
  const contentType = await typeByContent(stream as AsyncIterable<Buffer>, filename, (chunk) => writer.append(chunk));
  await writer.flush();
  return { filename, contentType };
}

/**
 * Streams a multipart body through busboy and hands its one file to `onFile`. Settles only after
 * `onFile` has stopped, so a caller cleaning up after a refusal races no late write. After a
 * refusal the rest of the body is read and discarded (bounded) so the client receives the answer.
 */
function parseOneFile<T>(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  maxBytes: number,
  onFile: (stream: Readable, filename: string | undefined) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        // busboy signals 'limit' on REACHING fileSize, so max + 1: a file of exactly max bytes passes.
        limits: { files: 1, fileSize: maxBytes + 1, fields: 10, fieldSize: 1024, parts: 11, headerPairs: 20 },
      });
    } catch (e) {
      reject(badForm(`The multipart header is malformed (${(e as Error).message}).`));
      return;
    }
    const source = Readable.fromWeb(body as unknown as NodeReadableStream<Uint8Array>);
    let fileStream: Readable | null = null;
    let filePromise: Promise<T> | null = null;
    let settled = false;
    const fail = (e: unknown) => {
      if (settled) return;
      settled = true;
      source.unpipe(parser);
      fileStream?.destroy();
      const done = filePromise
        ? filePromise.then(
            () => {},
            () => {},
          )
        : Promise.resolve();
      void done.then(() => discardRest(source)).then(() => reject(e));
    };
    parser.on('file', (_field, stream, info) => {
      fileStream = stream;
      stream.on('limit', () => fail(tooLarge(maxBytes)));
      filePromise = onFile(stream, info.filename);
      filePromise.catch(fail);
    });
    parser.on('filesLimit', () => fail(badForm('Send exactly one file (got more).')));
    parser.on('partsLimit', () => fail(badForm('Too many parts.')));
    parser.on('fieldsLimit', () => fail(badForm('Too many fields.')));
    parser.on('error', (e: Error) => fail(badForm(`The multipart body is malformed (${e.message}).`)));
    parser.on('close', () => {
      if (!filePromise) return fail(badForm('Send exactly one file (got 0).'));
      filePromise.then((r) => {
        if (!settled) {
          settled = true;
          resolve(r);
        }
      }, fail);
    });
    source.on('error', () => fail(badForm('The request body was cut off.')));
    source.pipe(parser);
  });
}

/** Reads and drops the rest of a refused body, up to a bound (then the connection is cut). */
function discardRest(source: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (source.readableEnded || source.destroyed) return resolve();
    let bytes = 0;
    const stop = () => {
      source.destroy();
      resolve();
    };
    const timer = setTimeout(stop, DISCARD_MS);
    timer.unref();
    source.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > DISCARD_BYTES) stop();
    });
    source.on('end', () => {
      clearTimeout(timer);
      resolve();
    });
    source.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    source.on('error', () => {});
    source.resume();
  });
}
