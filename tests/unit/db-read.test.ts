/** A read replica's lag from the primary's sampled WAL positions (db/read.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lagOf } from '../../db/read';

describe('read replica lag', () => {
  const history: Array<[number, bigint]> = [
    [0, 100n],
    [2000, 150n],
    [4000, 150n],
    [6000, 400n],
  ];
  it('is zero once the replica replayed what the primary last had', () => {
    assert.equal(lagOf(history, 400n, 7000), 0);
    assert.equal(lagOf(history, 500n, 7000), 0);
  });
  it('is the time since the primary first had WAL the replica has not replayed', () => {
    // Replayed 150 (the primary's position from 2 s to 4 s): behind since the sample at 6 s.
    assert.equal(lagOf(history, 150n, 7000), 1);
    assert.equal(lagOf(history, 120n, 7000), 5);
  });
  it('is at least the whole window when the replica is behind its oldest sample', () => {
    assert.equal(lagOf(history, 50n, 10_000), 10);
  });
});
