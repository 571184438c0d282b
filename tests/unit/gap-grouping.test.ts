/**
 * Content-gap grouping (lib/insights/gaps.ts) stays near-linear: questions that share no word are
 * never compared (it was every pair, n²/2), and 4,000 questions group well inside the page's second.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GapRow } from '../../db/queries/insights';
import { groupGapQuestions } from '../../lib/insights/gaps';

const row = (i: number, lexemes: string[]): GapRow => ({
  conversation_id: `c${i}`,
  question: `${lexemes.join(' ')}?`,
  reason: 'declined',
  lexemes,
  reply: null,
  at: new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString(),
});

describe('content-gap grouping', () => {
  it('compares no pair of questions with disjoint words', () => {
    const rows = Array.from({ length: 2_000 }, (_, i) => row(i, [`a${i}`, `b${i}`, `c${i}`]));
    const stats = { compared: -1 };
    const groups = groupGapQuestions(rows, { stats });
    assert.equal(groups.length, 2_000);
    assert.equal(stats.compared, 0);
  });

  it('compares only questions that share a word, and still connects them', () => {
    // 1,000 pairs: each pair shares two rare words of three, no two pairs share anything.
    const rows = Array.from({ length: 2_000 }, (_, i) => row(i, [`topic${i >> 1}`, `more${i >> 1}`, `own${i}`]));
    const stats = { compared: -1 };
    const groups = groupGapQuestions(rows, { stats });
    assert.equal(groups.length, 1_000);
    assert.ok(stats.compared <= 1_000, `${stats.compared} comparisons`);
  });

  it('groups 4,000 questions of a shared vocabulary in well under a second', { timeout: 10_000 }, () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const word = () => `w${Math.floor(3_000 * rand() ** 3)}`;
    const rows = Array.from({ length: 4_000 }, (_, i) => row(i, [...new Set(Array.from({ length: 3 + Math.floor(rand() * 8) }, word))].sort()));
    const stats = { compared: -1 };
    const t = performance.now();
    groupGapQuestions(rows, { stats });
    const ms = performance.now() - t;
    assert.ok(stats.compared >= 0 && stats.compared < 4_000 * 40, `${stats.compared} comparisons (all pairs: ${(4_000 * 3_999) / 2})`);
    assert.ok(ms < 2_000, `${ms.toFixed(0)} ms`);
  });
});
