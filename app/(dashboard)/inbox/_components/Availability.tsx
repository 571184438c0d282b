'use client';
import { useState, useTransition } from 'react';
import { setAvailabilityAction } from '../actions';
import styles from '../inbox.module.css';

/** The member's own availability: Online (visitors are promised a person) or Away. */
export function Availability({ initial }: { initial: 'online' | 'away' }) {
  const [value, setValue] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const choose = (next: 'online' | 'away') =>
    start(async () => {
      const r = await setAvailabilityAction(next);
      if (r?.ok) setValue(next);
      setError(r && !r.ok ? r.error : null);
    });
  return (
    <fieldset className={styles.availability} disabled={pending}>
      <legend className="muted">Availability</legend>
      {(['online', 'away'] as const).map((v) => (
        <label key={v}>
          <input type="radio" name="availability" value={v} checked={value === v} onChange={() => choose(v)} /> {v === 'online' ? 'Online' : 'Away'}
        </label>
      ))}
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </fieldset>
  );
}
