'use client';
import { useActionState, useEffect, useState, useTransition, type FormEvent } from 'react';
import { addSynonymsAction, removeSynonymsAction } from './actions';
import { RowAction } from './KnowledgeForms';

export function AddSynonyms() {
  const [words, setWords] = useState('');
  const [state, dispatch, pending] = useActionState(addSynonymsAction, null);
  const [, start] = useTransition();
  const submit = (e: FormEvent<HTMLFormElement>) => {
    // Sent by hand so that a refused group stays in the box to correct; an added one clears it.
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    start(() => dispatch(form));
  };
  useEffect(() => {
    if (state?.ok) setWords('');
  }, [state]);
  const added = state?.ok ? state.words.join(', ') : null;
  return (
    <>
      <form onSubmit={submit} className="row">
        <div className="field">
          <label htmlFor="kb-synonyms">Words</label>
          <input
            id="kb-synonyms"
            name="words"
            type="text"
            required
            placeholder="postage, shipping"
            aria-describedby="kb-synonyms-hint"
            value={words}
            onChange={(e) => setWords(e.target.value)}
          />
        </div>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Adding…' : 'Add synonyms'}
        </button>
      </form>
      <p id="kb-synonyms-hint" className="muted" style={{ marginBottom: 0 }}>
        One group at a time, separated by commas: 2 to 10 words or short phrases.
      </p>
      {state && !state.ok && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {state.error}
        </p>
      )}
      {added && (
        <p className="success" role="status" style={{ marginTop: '1rem' }}>
          Added: {added}.
        </p>
      )}
    </>
  );
}

export function RemoveSynonymsButton({ id, words }: { id: string; words: string }) {
  return <RowAction label="Remove" busy="Removing…" name={words} run={() => removeSynonymsAction(id)} />;
}
