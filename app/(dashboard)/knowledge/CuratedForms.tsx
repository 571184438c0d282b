'use client';
import { useActionState, useEffect, useState } from 'react';
import { editCuratedAction, removeCuratedAction } from './actions';
import { RowAction } from './KnowledgeForms';
import styles from './knowledge.module.css';

type Entry = { id: string; questions: string[]; answer: string };

/** One curated answer: its questions and answer, "Edit" (both in place) and "Remove". */
export function CuratedEntry({ entry, editable }: { entry: Entry; editable: boolean }) {
  const [editing, setEditing] = useState(false);
  const [state, dispatch, pending] = useActionState(editCuratedAction.bind(null, entry.id), null);
  const name = entry.questions[0] ?? '';
  useEffect(() => {
    if (state?.ok) setEditing(false);
  }, [state]);
  if (editing)
    return (
      <form action={dispatch} className={styles.curatedForm}>
        <div className="field">
          <label htmlFor={`cq-${entry.id}`}>Questions</label>
          <textarea id={`cq-${entry.id}`} name="questions" rows={3} defaultValue={entry.questions.join('\n')} aria-describedby={`cq-hint-${entry.id}`} />
          <span id={`cq-hint-${entry.id}`} className="muted">
            One question per line: the bot gives this answer for these and similar questions.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`ca-${entry.id}`}>Answer</label>
          <textarea id={`ca-${entry.id}`} name="answer" rows={5} defaultValue={entry.answer} />
        </div>
        <span className={styles.actions}>
          <button className="btn" type="submit" disabled={pending}>
            {pending ? 'Saving…' : 'Save answer'}
          </button>
          <button className="btn secondary" type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </span>
        {state && !state.ok && (
          <p className="error" role="alert">
            {state.error}
          </p>
        )}
      </form>
    );
  return (
    <>
      <ul className={styles.questions} aria-label="Questions">
        {entry.questions.map((q) => (
          <li key={q}>{q}</li>
        ))}
      </ul>
      <p className={styles.answer}>{entry.answer}</p>
      {editable && (
        <span className={styles.actions}>
          <button type="button" className="btn secondary" aria-label={`Edit ${name}`} onClick={() => setEditing(true)}>
            Edit
          </button>
          <RowAction label="Remove" busy="Removing…" name={name} run={() => removeCuratedAction(entry.id)} />
        </span>
      )}
    </>
  );
}
