import { isAppError } from '../core/errors';

export type ActionResult<T = object> = ({ ok: true } & T) | { ok: false; error: string } | null;

/** Runs a dashboard action; known errors become a message for the form, others are logged. */
export async function actionResult<T extends object>(fn: () => Promise<T>): Promise<ActionResult<T>> {
  try {
    return { ok: true, ...(await fn()) };
  } catch (e) {
    if (isAppError(e)) return { ok: false, error: e.message };
    if ((e as { digest?: string })?.digest?.startsWith('NEXT_REDIRECT')) throw e;
    console.error('dashboard action failed:', e);
    return { ok: false, error: 'Something went wrong; please try again.' };
  }
}
