'use client';
import { useState, useTransition } from 'react';
import { addSuggestedSynonymAction } from '../insights/gaps/actions';

type Suggestion = { word: string; synonym: string };

/** "Add synonym: postage = shipping" buttons: one click adds the group; the page then no longer suggests it. */
export function SynonymSuggestions({ suggestions, label }: { suggestions: Suggestion[]; label: string }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (suggestions.length === 0) return null;
  return (
    <div className="synonym-suggestions">
      <p className="muted">{label}</p>
      <ul aria-label="Suggested synonyms">
        {suggestions.map((s) => (
          <li key={`${s.word}=${s.synonym}`}>
            <button
              type="button"
              className="btn secondary"
              disabled={pending}
              onClick={() =>
                start(async () => {
                  const r = await addSuggestedSynonymAction(s.word, s.synonym);
                  setError(r && !r.ok ? r.error : null);
                })
              }
            >
              Add synonym: {s.word} = {s.synonym}
            </button>
          </li>
        ))}
      </ul>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
