/**
 * A long transcript is shown a page of responses at a time (the server renders only that page):
 * pages count from the oldest, and without a choice the newest page is shown, where a conversation
 * stands now. `response` (a response id, as the responses table links) picks the page holding it.
 */
export const TRANSCRIPT_PAGE_SIZE = 50;

export type TranscriptPage<T> = { entries: T[]; page: number; pages: number; total: number; first: number };

export function pageOfTranscript<T extends { id: string }>(all: T[], query: { page?: string | string[]; response?: string | string[] }): TranscriptPage<T> {
  const pages = Math.max(1, Math.ceil(all.length / TRANSCRIPT_PAGE_SIZE));
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const asked = Number(one(query.page));
  const holding = one(query.response) ? all.findIndex((e) => e.id === one(query.response)) : -1;
  const page = holding >= 0 ? Math.floor(holding / TRANSCRIPT_PAGE_SIZE) + 1 : Number.isInteger(asked) && asked >= 1 ? Math.min(asked, pages) : pages;
  const first = (page - 1) * TRANSCRIPT_PAGE_SIZE;
  return { entries: all.slice(first, first + TRANSCRIPT_PAGE_SIZE), page, pages, total: all.length, first };
}
