'use client';
import { useActionState, useId, useState } from 'react';
import { dismissGapAction, saveGapAnswerAction } from './actions';

/** "Add answer" (the member's reply as the draft) and "Dismiss" for one group of questions. */
export function GapActions({ questions, draft }: { questions: string[]; draft: string | null }) {
  const [open, setOpen] = useState(false);
  const [saved, save, saving] = useActionState(saveGapAnswerAction, null);
  const [dismissed, dismiss, dismissing] = useActionState(dismissGapAction, null);
  const id = useId();
  const json = JSON.stringify(questions);
  const error = (saved && !saved.ok && saved.error) || (dismissed && !dismissed.ok && dismissed.error) || null;
  if (saved?.ok)
    return (
      <p className="success" role="status">
        Saved: the bot now answers these and similar questions with it.
      </p>
    );
  if (dismissed?.ok)
    return (
      <p className="success" role="status">
        Dismissed.
      </p>
    );
  return (
    <div className="gap-actions">
      {open ? (
        <form action={save}>
          <input type="hidden" name="questions" value={json} />
          <label htmlFor={`${id}-answer`}>Answer</label>
          <textarea id={`${id}-answer`} name="answer" rows={4} defaultValue={draft ?? ''} required />
          <button className="btn" type="submit" disabled={saving}>
            {saving ? 'Saving…' : 'Save answer'}
          </button>
        </form>
      ) : (
        <button className="btn" type="button" onClick={() => setOpen(true)}>
          Add answer
        </button>
      )}
      <form action={dismiss}>
        <input type="hidden" name="questions" value={json} />
        <button className="btn secondary" type="submit" disabled={dismissing}>
          Dismiss
        </button>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
