'use client';
import { useState, useTransition } from 'react';
import { signInWithTicket } from '../../../_components/TicketSignIn';
import { confirmSignupAction } from '../../actions';

export function ConfirmButton({ token }: { token: string }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        className="btn"
        disabled={pending}
        onClick={() =>
          start(async () => {
            const r = await confirmSignupAction(token);
            if (!r?.ok) {
              setError(r?.error ?? 'Failed');
              return;
            }
            if (!(await signInWithTicket(r.ticket))) setError('Your account is ready; sign in.');
          })
        }
      >
        {pending ? 'Confirming…' : 'Confirm account'}
      </button>
      {error && (
        <p className="error" role="alert">
          {error} <a href="/login">Sign in</a>
        </p>
      )}
    </>
  );
}
