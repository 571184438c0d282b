import assert from 'node:assert/strict';
import { test } from 'node:test';
import { choosePage, decodeEarlier, encodeEarlier, pageOfTranscript, TRANSCRIPT_PAGE_SIZE } from '../../lib/dashboard/transcript-pages';

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

test('the page of a transcript read a page at a time, and the inbox cursor: only one it gave is taken', () => {
  assert.deepEqual(choosePage(2 * TRANSCRIPT_PAGE_SIZE + 7, {}, null), { page: 3, pages: 3, first: 2 * TRANSCRIPT_PAGE_SIZE });
  assert.deepEqual(choosePage(2 * TRANSCRIPT_PAGE_SIZE + 7, { page: '2' }, TRANSCRIPT_PAGE_SIZE - 1), { page: 1, pages: 3, first: 0 }, 'the response wins');
  assert.deepEqual(choosePage(0, { page: '5' }, null), { page: 1, pages: 1, first: 0 });
  const key = { k: '2026-11-28 14:00:00.123000', rank: 1, seq: 42, id: '0b6f5f0e-6a1e-4a0e-9d7e-0a1d2c3b4a59' };
  assert.deepEqual(decodeEarlier(encodeEarlier(key)), key);
  const bad = [
    'nope',
    '',
    Buffer.from('[1,2,3,4]').toString('base64url'),
    Buffer.from(JSON.stringify(['2026-11-28 14:00:00', 1, 42, key.id])).toString('base64url'),
    Buffer.from(JSON.stringify([key.k, 2, 42, key.id])).toString('base64url'),
    Buffer.from(JSON.stringify([key.k, 0, 'x', key.id])).toString('base64url'),
    Buffer.from(JSON.stringify([key.k, 0, 0, "1' OR 1=1"])).toString('base64url'),
  ];
  for (const cursor of bad)
    assert.throws(
      () => decodeEarlier(cursor),
      (e: Error & { code?: string }) => e.code === 'invalid_request',
      cursor,
    );
});
