import { stringify } from 'csv-stringify/sync';
import { getDb } from '../../db/client';
import { listConversationsAfter, type ConversationExportRow } from '../../db/queries/conversations';
import { listResponsesAfter, type ResponseRow } from '../../db/queries/responses';
import { openSnapshotCursor, type SnapshotCursor } from '../../db/queries/snapshot';
import { AppError } from '../api/errors';
import { parseListQuery, type ListQuery } from '../api/list-query';
import { conversationFilterOf, messagesOf, toConversationRecord } from '../conversations/service';
import { responseFilterOf, toResponseRecord } from '../responses/service';
import { CONVERSATION_CSV_COLUMNS, ConversationExportQuery, RESPONSE_CSV_COLUMNS, ResponseExportQuery } from './contract';

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

function encoder(format: Format, columns: string[]): (records: Array<Record<string, unknown>>) => string {
  if (format === 'ndjson') return (records) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
  let header = true;
  return (records) => {
    const text = stringify(records, { header, columns, record_delimiter: '\r\n', quoted_match: /[\r\n]/ });
    header = false;
    return text;
  };
}

/**
 * The streamed body: pages leave the snapshot cursor only when the client's side has taken the
 * previous one (a pull stream with one chunk of room, one page read ahead), so a slow reader holds
 * the export at two pages and the server's memory stays flat. The first page is read before answering, so a bad
 * database is a problem+json answer, not a cut stream.
 */
async function streamed<T>(cursor: SnapshotCursor<T>, encode: (rows: T[]) => string, what: string, format: Format): Promise<Response> {
  let first: T[];
  try { first = await cursor.next(); } catch (e) { await cursor.close(); throw e; }
  const bytes = new TextEncoder();
  // One page is read ahead: PostgreSQL reads page n+1 while this process encodes and sends page n
  // (at most two pages in memory; a slow reader still holds the export, as pull waits for it).
  const readAhead = () => { const p = cursor.next(); p.catch(() => {}); return p; };
  let next: Promise<T[]> | null = first.length === EXPORT_PAGE_SIZE ? readAhead() : null;
  let pending: T[] | null = first;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const page = pending ?? await next!;
        if (!pending) next = page.length === EXPORT_PAGE_SIZE ? readAhead() : null;
        pending = null;
        const text = encode(page);
        if (text) controller.enqueue(bytes.encode(text));
        if (page.length < EXPORT_PAGE_SIZE) { await cursor.close(); controller.close(); }
      } catch (e) {
        await cursor.close();
        controller.error(e);
      }
    },
    async cancel() { await next?.catch(() => {}); await cursor.close(); },
  }, { highWaterMark: 1 });
  return new Response(body, {
    status: 200,
    headers: {
      'Content-Type': CONTENT_TYPE[format],
      'Content-Disposition': `attachment; filename="${filename(what, format)}"`,
      'Cache-Control': 'no-store',
    },
  });
}

/** GET /response/export for one account (CONTRACTS §10): the list's records and order, all pages. */
export async function exportResponses(accountId: number, params: URLSearchParams): Promise<Response> {
  const { q, channelIds, format } = parse(params, ResponseExportQuery);
  const filter = responseFilterOf(q, channelIds);
  const sortKey = (q.order_by ?? 'created_at') as Parameters<typeof listResponsesAfter>[3];
  const dir = q.sort ?? 'DESC';
  const cursor = openSnapshotCursor(await getDb(), (tx, last: ResponseRow & { sort_k: string } | null) =>
    listResponsesAfter(tx, accountId, filter, sortKey, dir, last && { k: last.sort_k, id: last.id }, EXPORT_PAGE_SIZE));
  const encode = encoder(format, RESPONSE_CSV_COLUMNS);
  return streamed(cursor, (page) => encode(page.map(toResponseRecord)), 'responses', format);
}

/** GET /conversation/export for one account; `include=messages` adds each conversation's messages (NDJSON). */
export async function exportConversations(accountId: number, params: URLSearchParams): Promise<Response> {
  const { q, channelIds, format } = parse(params, ConversationExportQuery);
  const withMessages = q.include === 'messages';
  if (withMessages && format === 'csv') {
    const message = 'messages are nested lists: use format=ndjson (the default) with include=messages';
    throw new AppError('invalid_parameters', `include: ${message}`, { errors: [{ param: 'include', message }] });
  }
  const filter = conversationFilterOf(q, channelIds);
  const sortKey = (q.order_by ?? 'created_at') as Parameters<typeof listConversationsAfter>[3];
  const dir = q.sort ?? 'DESC';
  const cursor = openSnapshotCursor(await getDb(), (tx, last: ConversationExportRow | null) =>
    listConversationsAfter(tx, accountId, filter, sortKey, dir, last && { k: last.sort_k, id: last.id }, EXPORT_PAGE_SIZE, withMessages));
  const encode = encoder(format, CONVERSATION_CSV_COLUMNS);
  const record = (c: ConversationExportRow) => (withMessages
    ? { ...toConversationRecord(c), messages: messagesOf(c.transcript ?? [], c.attachments ?? []) }
    : toConversationRecord(c));
  return streamed(cursor, (page) => encode(page.map(record)), 'conversations', format);
}
