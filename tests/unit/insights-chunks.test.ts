/** The insights refresh's statements stay bounded whatever an account holds (db/queries/insights.ts refreshChunks). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { refreshChunks } from '../../db/queries/insights';

const days = (n: number) => Array.from({ length: n }, (_, i) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10));

it('a small account: a month per statement', () => {
  const d = days(70);
  const chunks = refreshChunks(d, new Map(d.map((x) => [x, 100])));
  assert.deepEqual(
    chunks.map((c) => c.length),
    [31, 31, 8],
  );
  assert.deepEqual(chunks.flat(), d, 'every day once, in order');
});

it('an imported history of 10,000 conversations and responses a day: at most 50,000 rows per statement', () => {
  const d = days(100);
  const chunks = refreshChunks(d, new Map(d.map((x) => [x, 10_000])));
  assert.equal(chunks.length, 20);
  assert.ok(chunks.every((c) => c.length === 5));
  assert.deepEqual(chunks.flat(), d);
});

it('a day heavier than the bound is a statement of its own; days without rows weigh nothing', () => {
  const d = days(4);
  const chunks = refreshChunks(
    d,
    new Map([
      [d[0]!, 10],
      [d[1]!, 80_000],
      [d[2]!, 10],
    ]),
  );
  assert.deepEqual(chunks, [[d[0]!], [d[1]!], [d[2]!, d[3]!]]);
  assert.deepEqual(refreshChunks([], new Map()), []);
});
