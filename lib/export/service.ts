import { readDb, type ReadTarget } from '../../db/read';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { getDatabase, type Db } from '../../db/client';
import { listConversationsAfter, type ConversationExportRow } from '../../db/queries/conversations';
import { conversationExportStatement, responseExportStatement, startCopyOut, type CopyOut } from '../../db/queries/export';
import { listResponsesAfter, type ResponseRow } from '../../db/queries/responses';
import { openSnapshotCursor, type SnapshotCursor } from '../../db/queries/snapshot';
import { AppError } from '../core/errors';
import { attachmentUrl } from '../api/links';
import { parseListQuery, type ListQuery } from '../api/list-query';
import { apiMessagesOf, conversationFilterOf, toConversationRecord } from '../conversations/service';
import { responseFilterOf, toResponseRecord } from '../responses/service';
import { CONVERSATION_CSV_COLUMNS, ConversationExportQuery, RESPONSE_CSV_COLUMNS, ResponseExportQuery } from './contract';
import { CopyBinaryLines } from './copy-binary';
import { acquireExportSlot, type ExportSlot } from './slots';
import { getEnv } from '../env';
import { processSlot } from '../core/process';

/** Rows per keyset page: one page is read ahead of the client at most. */
export const EXPORT_PAGE_SIZE = 1000;

type Format = 'ndjson' | 'csv';
type Parsed = { q: ListQuery<string> & { include?: 'messages' }; channelIds: number[]; format: Format };

function parse(params: URLSearchParams, schema: typeof ResponseExportQuery | typeof ConversationExportQuery): Parsed {
  const { query, channelIds } = parseListQuery(params, schema as unknown as Parameters<typeof parseListQuery>[1]);
  const q = query as unknown as Parsed['q'] & { format?: Format };
  return { q, channelIds, format: q.format ?? 'ndjson' };
}

/** `responses-20260105-100112.csv`: the UTC time of the export. */
function filename(what: string, format: Format): string {
  const t = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${what}-${t}.${format}`;
}

const CONTENT_TYPE: Record<Format, string> = { ndjson: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' };

/**
 * A text cell a spreadsheet would read as a formula (OWASP's rule: it starts with =, +, -, @, tab or
 * CR) is written with a leading `'`. Only text: numbers (counts, ids) stay as they are.
 * db/queries/export.ts applies the same rule in SQL on the COPY path.
 */
export const CSV_FORMULA_START = /^[=+\-@\t\r]/;
export function neutraliseCsvText(value: string): string {
  return CSV_FORMULA_START.test(value) ? `'${value}` : value;
}

const CSV_OPTIONS = { columns: [] as string[], record_delimiter: '\r\n', quoted_match: /[\r\n]/, cast: { string: neutraliseCsvText, boolean: String } };

function encoder(format: Format, columns: string[]): (records: Array<Record<string, unknown>>) => string {
  if (format === 'ndjson') return (records) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
  let header = true;
  return (records) => {
    const text = stringify(records, { ...CSV_OPTIONS, header, columns });
    header = false;
    return text;
  };
}

/** What a body reads from: the next bytes (null: no more), and an end that frees the database work. */
type Source = { next: () => Promise<Uint8Array | null>; close: () => Promise<void> };

/**
 * The download's body: a pull stream with one chunk of room, so a chunk leaves the database only
 * when the client's side took the previous one and memory stays flat. A chunk the client has not
 * taken for EXPORT_STALL_SECONDS ends the export: the stream errors (both doors then destroy the
 * socket), the statement or cursor is ended and its connection and slot released.
 */
function guardedBody(source: Source, slot: ExportSlot): ReadableStream<Uint8Array> {
  const stallMs = getEnv().EXPORT_STALL_SECONDS * 1000;
  let timer: NodeJS.Timeout | null = null;
  let closing: Promise<void> | null = null;
  const disarm = () => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
  };
  const finish = () => {
    disarm();
    closing ??= source.close().finally(() => slot.release());
    return closing;
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        disarm();
        try {
          const chunk = await source.next();
          if (chunk === null) {
            await finish();
            controller.close();
            return;
          }
          controller.enqueue(chunk);
          timer = setTimeout(() => {
            controller.error(new AppError('unavailable', `The export's reader took no data for ${getEnv().EXPORT_STALL_SECONDS} s; it was ended.`));
            void finish().catch(() => {});
          }, stallMs);
        } catch (e) {
          await finish().catch(() => {});
          controller.error(e);
        }
      },
      async cancel() {
        await finish().catch(() => {});
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * The keyset body (PGlite, and PostgreSQL when asked): one page is read ahead of the client, so
 * PostgreSQL reads page n+1 while this process encodes and sends page n (two pages in memory at
 * most). The first page is read before answering, so a bad database is a problem+json answer,
 * not a cut stream.
 */
async function streamed<T>(cursor: SnapshotCursor<T>, encode: (rows: T[]) => string, what: string, format: Format, slot: ExportSlot): Promise<Response> {
  let first: T[];
  try {
    first = await cursor.next();
  } catch (e) {
    await cursor.close();
    throw e;
  }
  const bytes = new TextEncoder();
  const readAhead = () => {
    const p = cursor.next();
    p.catch(() => {});
    return p;
  };
  let next: Promise<T[]> | null = first.length === EXPORT_PAGE_SIZE ? readAhead() : null;
  let pending: T[] | null = first;
  let done = false;
  const source: Source = {
    async next() {
      while (!done) {
        const page = pending ?? (await next!);
        if (!pending) next = page.length === EXPORT_PAGE_SIZE ? readAhead() : null;
        pending = null;
        if (page.length < EXPORT_PAGE_SIZE) done = true;
        const text = encode(page);
        if (text) return bytes.encode(text);
      }
      return null;
    },
    async close() {
      await next?.catch(() => {});
      await cursor.close();
    },
  };
  return download(guardedBody(source, slot), what, format);
}

/**
 * The keyset body on PGlite: its one session serves every request, so the snapshot is read at the
 * database's pace into a temporary file (a page in memory at a time), the transaction ends, and the
 * client reads the file at its own pace. The file is unlinked once open: nothing is left behind.
 */
async function spooled<T>(cursor: SnapshotCursor<T>, encode: (rows: T[]) => string, what: string, format: Format, slot: ExportSlot): Promise<Response> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-export-'));
  try {
    const file = path.join(dir, 'body');
    const out = await fs.open(file, 'w');
    try {
      for (;;) {
        const page = await cursor.next();
        const text = encode(page);
        if (text) await out.write(text);
        if (page.length < EXPORT_PAGE_SIZE) break;
      }
    } finally {
      await cursor.close();
      await out.close();
    }
    const input = await fs.open(file, 'r');
    const source: Source = {
      async next() {
        const buf = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
        const { bytesRead } = await input.read(buf, 0, buf.length, null);
        return bytesRead > 0 ? buf.subarray(0, bytesRead) : null;
      },
      close: () => input.close(),
    };
    return download(guardedBody(source, slot), what, format);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function download(body: ReadableStream<Uint8Array>, what: string, format: Format): Response {
  return new Response(body, {
    status: 200,
    headers: {
      'Content-Type': CONTENT_TYPE[format],
      'Content-Disposition': `attachment; filename="${filename(what, format)}"`,
      'Cache-Control': 'no-store',
    },
  });
}

/** Bytes handed to the client per chunk on the COPY path. */
const COPY_CHUNK_BYTES = 64 * 1024;

/**
 * The streamed body on PostgreSQL: one COPY statement (db/queries/export.ts) whose rows are the
 * finished lines. Each pull takes COPY data until about 64 KB of lines are gathered and hands them
 * on; nothing is read while the client is not reading (postgres.js pauses the socket when its
 * stream is full, so PostgreSQL waits). The first chunk is read before answering, so a failing
 * statement is a problem+json answer, not a cut stream. A client that goes away, or stalls,
 * cancels the statement.
 */
async function copied(copy: CopyOut, header: string, what: string, format: Format, slot: ExportSlot): Promise<Response> {
  const { stream, failed } = copy;
  const lines = new CopyBinaryLines();
  let done = false;
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  let error: unknown = null;
  let streamEnded = false;
  stream.on('readable', signal);
  stream.once('end', () => {
    streamEnded = true;
    signal();
  });
  stream.once('error', (e) => {
    error ??= e;
    signal();
  });
  failed.catch((e: unknown) => {
    error ??= e;
    signal();
  });

  async function nextChunk(): Promise<Buffer | null> {
    const parts: Buffer[] = [];
    let size = 0;
    while (size < COPY_CHUNK_BYTES) {
      if (error) throw error;
      const data = stream.read() as Buffer | null;
      if (data !== null) {
        size += lines.feed(data, parts);
        continue;
      }
      if (streamEnded) {
        lines.finish();
        done = true;
        break;
      }
      if (size > 0) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    return size > 0 ? Buffer.concat(parts, size) : null;
  }

  let first: Buffer | null;
  try {
    first = await nextChunk();
  } catch (e) {
    await copy.cancel();
    throw e;
  }
  const prefix = header ? Buffer.from(header) : null;
  let pending: Buffer | null = prefix && first ? Buffer.concat([prefix, first]) : (first ?? prefix);
  const source: Source = {
    async next() {
      const chunk = pending ?? (done ? null : await nextChunk());
      pending = null;
      return chunk;
    },
    close: () => copy.cancel(),
  };
  return download(guardedBody(source, slot), what, format);
}

const keysetOnly = processSlot<boolean>('svc.exportKeysetOnly');

/**
 * Tests and the benchmark compare both paths on PostgreSQL: `true` makes every export take the
 * keyset pages. Kept on globalThis, as the server and the route handlers Next bundles hold
 * separate copies of this module.
 */
export function setExportKeysetOnly(on: boolean): void {
  keysetOnly.set(on);
}

/** The database's handle, and whether it exports by COPY (PostgreSQL) or by keyset pages (PGlite). */
async function database(target: ReadTarget): Promise<{ db: Db; on: ReadTarget; kind: 'pglite' | 'postgres'; copy: boolean }> {
  const { kind } = await getDatabase();
  return { ...(await readDb(target)), kind, copy: kind === 'postgres' && !keysetOnly.get() };
}

/** Runs `start` holding an export slot (or throws the 429); the slot is the body's to release, or released here when starting fails. */
async function withSlot(
  accountId: number,
  target: ReadTarget,
  start: (database: { db: Db; kind: 'pglite' | 'postgres'; copy: boolean }, slot: ExportSlot) => Promise<Response>,
): Promise<Response> {
  const opened = await database(target);
  const slot = await acquireExportSlot(accountId, opened.on);
  try {
    return await start(opened, slot);
  } catch (e) {
    slot.release();
    throw e;
  }
}

function exportStatementTimeoutMs(): number {
  return getEnv().EXPORT_STATEMENT_TIMEOUT_MS;
}

/** The CSV header row, written by the same writer and options as the keyset path's. */
function csvHeader(columns: string[]): string {
  return stringify([], { ...CSV_OPTIONS, header: true, columns });
}

/** The attachment link around its id (the API's one link builder), for the statement to build. */
function attachmentUrlParts(): { prefix: string; suffix: string } {
  const marker = '00000000-0000-4000-8000-000000000000';
  const [prefix, suffix, ...more] = attachmentUrl(marker).split(marker);
  if (prefix === undefined || suffix === undefined || more.length > 0) throw new Error('attachmentUrl does not hold the id once');
  return { prefix, suffix };
}

/** GET /response/export for one account (docs/contracts.md §10): the list's records and order, all pages. */
export async function exportResponses(accountId: number, params: URLSearchParams, target: ReadTarget): Promise<Response> {
  const { q, channelIds, format } = parse(params, ResponseExportQuery);
  const filter = responseFilterOf(q, channelIds);
  const sortKey = (q.order_by ?? 'created_at') as Parameters<typeof listResponsesAfter>[3];
  const dir = q.sort ?? 'DESC';
  return withSlot(accountId, target, async ({ db, kind, copy }, slot) => {
    if (copy) {
      const running = await startCopyOut(db, responseExportStatement(accountId, filter, sortKey, dir, format), exportStatementTimeoutMs());
      return copied(running, format === 'csv' ? csvHeader(RESPONSE_CSV_COLUMNS) : '', 'responses', format, slot);
    }
    const cursor = openSnapshotCursor(db, (tx, last: (ResponseRow & { sort_k: string }) | null) =>
      listResponsesAfter(tx, accountId, filter, sortKey, dir, last && { k: last.sort_k, id: last.id }, EXPORT_PAGE_SIZE),
    );
    const encode = encoder(format, RESPONSE_CSV_COLUMNS);
    return (kind === 'pglite' ? spooled : streamed)(cursor, (page) => encode(page.map(toResponseRecord)), 'responses', format, slot);
  });
}

/** GET /conversation/export for one account; `include=messages` adds each conversation's messages (NDJSON). */
export async function exportConversations(accountId: number, params: URLSearchParams, target: ReadTarget): Promise<Response> {
  const { q, channelIds, format } = parse(params, ConversationExportQuery);
  const withMessages = q.include === 'messages';
  if (withMessages && format === 'csv') {
    const message = 'messages are nested lists: use format=ndjson (the default) with include=messages';
    throw new AppError('invalid_parameters', `include: ${message}`, { errors: [{ param: 'include', message }] });
  }
  const filter = conversationFilterOf(q, channelIds);
  const sortKey = (q.order_by ?? 'created_at') as Parameters<typeof listConversationsAfter>[3];
  const dir = q.sort ?? 'DESC';
  return withSlot(accountId, target, async ({ db, kind, copy }, slot) => {
    if (copy) {
      const statement = conversationExportStatement(accountId, filter, sortKey, dir, format, withMessages ? attachmentUrlParts() : null);
      const running = await startCopyOut(db, statement, exportStatementTimeoutMs());
      return copied(running, format === 'csv' ? csvHeader(CONVERSATION_CSV_COLUMNS) : '', 'conversations', format, slot);
    }
    const cursor = openSnapshotCursor(db, (tx, last: ConversationExportRow | null) =>
      listConversationsAfter(tx, accountId, filter, sortKey, dir, last && { k: last.sort_k, id: last.id }, EXPORT_PAGE_SIZE, withMessages),
    );
    const encode = encoder(format, CONVERSATION_CSV_COLUMNS);
    const record = (c: ConversationExportRow) => (withMessages ? { ...toConversationRecord(c), messages: apiMessagesOf(c) } : toConversationRecord(c));
    return (kind === 'pglite' ? spooled : streamed)(cursor, (page) => encode(page.map(record)), 'conversations', format, slot);
  });
}
