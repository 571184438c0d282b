import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageOfTranscript, TRANSCRIPT_PAGE_SIZE } from '../../lib/dashboard/transcript-pages';

const entries = Array.from({ length: 2 * TRANSCRIPT_PAGE_SIZE + 7 }, (_, i) => ({ id: `r${i}` }));

test('a long transcript shows one page: the newest by default, a chosen one, or the one holding a response', () => {
  const newest = pageOfTranscript(entries, {});
  assert.deepEqual(
    { page: newest.page, pages: newest.pages, first: newest.first, n: newest.entries.length },
    { page: 3, pages: 3, first: 2 * TRANSCRIPT_PAGE_SIZE, n: 7 },
  );
  assert.equal(pageOfTranscript(entries, { page: '1' }).entries[0]!.id, 'r0');
  assert.equal(pageOfTranscript(entries, { page: '2' }).entries.length, TRANSCRIPT_PAGE_SIZE);
  assert.equal(pageOfTranscript(entries, { response: `r${TRANSCRIPT_PAGE_SIZE + 3}`, page: '3' }).page, 2, 'the response wins over the page');
  // Anything else is the newest page (never an error): out of range, not a number, repeated, unknown response.
  for (const q of [{ page: '99' }, { page: '0' }, { page: '-1' }, { page: 'abc' }, { page: '1.5' }, { page: ['1', '2'] }, { response: 'nope' }]) {
    const p = pageOfTranscript(entries, q);
    assert.ok(p.page === 3 || (Array.isArray(q.page) && p.page === 1), JSON.stringify(q));
  }
  assert.deepEqual(pageOfTranscript([], {}), { entries: [], page: 1, pages: 1, total: 0, first: 0 });
});
