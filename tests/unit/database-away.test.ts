import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDatabaseAway, waitToRetryWrite } from '../../lib/ops/database-away';

const withCode = (code: string) => Object.assign(new Error(code), { code });
const wrapped = (cause: Error) => Object.assign(new Error('Failed query'), { cause }); // as drizzle wraps driver errors

describe('database away', () => {
  const cases: Array<[string, unknown, boolean]> = [
    ['connection refused', withCode('ECONNREFUSED'), true],
    ['refused, wrapped by drizzle', wrapped(withCode('ECONNREFUSED')), true],
    ['connection closed by the driver', wrapped(withCode('CONNECTION_CLOSED')), true],
    ['server shutting down (57P01)', wrapped(withCode('57P01')), true],
    ['starting up (57P03)', withCode('57P03'), true],
    ['unique violation (23505)', wrapped(withCode('23505')), false],
    ['a plain error', new Error('boom'), false],
  ];
  for (const [name, error, away] of cases) {
    it(`${name}: ${away ? 'away' : 'not away'}`, () => assert.equal(isDatabaseAway(error), away));
  }

  it('another failure is retried after a short pause, then given up', async () => {
    const e = wrapped(withCode('23505'));
    const t0 = Date.now();
    await waitToRetryWrite(e, 0);
    assert.ok(Date.now() - t0 >= 200, 'a pause before the retry');
    await assert.rejects(waitToRetryWrite(e, 10), (thrown) => thrown === e);
  });
});
