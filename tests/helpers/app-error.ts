import assert from 'node:assert/strict';
import { isAppError } from '../../lib/core/errors';

/** The AppError a service call is refused with (fails the test when it succeeds or throws anything else). */
export async function refusalOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  assert.ok(isAppError(e), `expected an AppError, got ${String(e)}`);
  return { code: e.code, message: e.message };
}
