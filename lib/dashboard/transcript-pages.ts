/**
 * A long transcript is shown a page of units at a time (a response — its question and answer — or
 * a stored message), read from the database a page at a time. The transcript page counts pages
 * from the oldest, and without a choice shows the newest, where a conversation stands now;
 * `response` (a response id, as the responses table links) picks the page holding it. The inbox
 * shows the newest INBOX_PAGE_SIZE units and "Load earlier" goes back by a cursor (the oldest
 * unit shown), so messages arriving meanwhile never shift what it asks for.
 */
import { AppError } from '../core/errors';
import type { TranscriptKey } from '../../db/queries/overview';

export const TRANSCRIPT_PAGE_SIZE = 50;
export const INBOX_PAGE_SIZE = 50;

export type TranscriptPage<T> = { entries: T[]; page: number; pages: number; total: number; first: number };
export type PageChoice = { page: number; pages: number; first: number };

type PageQuery = { page?: string | string[]; response?: string | string[] };
const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/** The response a query asks to see, if any. */
export function responseAsked(query: PageQuery): string | undefined {
  return one(query.response);
}

/** The page to show of `total` units: the one holding the response (`holding`, its position), the asked one, else the newest. */
export function choosePage(total: number, query: PageQuery, holding: number | null): PageChoice {
  const pages = Math.max(1, Math.ceil(total / TRANSCRIPT_PAGE_SIZE));
  const asked = Number(one(query.page));
  const page =
    holding !== null && holding >= 0 ? Math.floor(holding / TRANSCRIPT_PAGE_SIZE) + 1 : Number.isInteger(asked) && asked >= 1 ? Math.min(asked, pages) : pages;
  return { page, pages, first: (page - 1) * TRANSCRIPT_PAGE_SIZE };
}

/** The same choice over units already in memory. */
export function pageOfTranscript<T extends { id: string }>(all: T[], query: PageQuery): TranscriptPage<T> {
  const r = responseAsked(query);
  const { page, pages, first } = choosePage(all.length, query, r ? all.findIndex((e) => e.id === r) : null);
  return { entries: all.slice(first, first + TRANSCRIPT_PAGE_SIZE), page, pages, total: all.length, first };
}

/** "Load earlier": the oldest unit shown, as an opaque cursor. */
export function encodeEarlier(k: TranscriptKey): string {
  return Buffer.from(JSON.stringify([k.k, k.rank, k.seq, k.id])).toString('base64url');
}

export function decodeEarlier(cursor: string): TranscriptKey {
  try {
    const [k, rank, seq, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (
      typeof k === 'string' &&
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/.test(k) &&
      (rank === 0 || rank === 1) &&
      typeof seq === 'number' &&
      Number.isFinite(seq) &&
      typeof id === 'string' &&
      /^[0-9a-f-]{36}$/.test(id)
    )
      return { k, rank, seq, id };
  } catch {}
  throw new AppError('invalid_request', 'before: is not a cursor this conversation gave.', {
    errors: [{ param: 'before', message: 'is not a cursor this conversation gave' }],
  });
}
