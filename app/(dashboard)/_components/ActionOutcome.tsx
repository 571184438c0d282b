import type { ActionResult } from '@/lib/dashboard/action-result';

/** A form action's outcome under the form: its error as an alert, or `saved` as a status. */
export function ActionOutcome<T extends object>({ state, saved }: { state: ActionResult<T>; saved: (ok: T) => string }) {
  if (!state) return null;
  return state.ok ? (
    <p className="success" role="status" style={{ marginTop: '1rem' }}>
      {saved(state)}
    </p>
  ) : (
    <p className="error" role="alert" style={{ marginTop: '1rem' }}>
      {state.error}
    </p>
  );
}
