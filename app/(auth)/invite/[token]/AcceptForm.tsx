'use client';
import { useActionState, useEffect, useState } from 'react';
import { signInWithTicket } from '../../_components/TicketSignIn';
import { acceptInvitationAction } from './actions';
import { FormResult } from '../../../(dashboard)/_components/FormResult';

export function AcceptForm({ token }: { token: string }) {
  const [state, action, pending] = useActionState(acceptInvitationAction.bind(null, token), null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (state?.ok) void signInWithTicket(state.ticket).then((ok) => setFailed(!ok));
  }, [state]);
  return (
    <form action={action}>
      <div className="field">
        <label htmlFor="name">Name</label>
        <input id="name" name="name" type="text" required maxLength={100} autoComplete="name" />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" required minLength={8} autoComplete="new-password" />
      </div>
      <FormResult state={state} />
      {failed && (
        <p className="error" role="alert">
          Your account is ready; <a href="/login">sign in</a>.
        </p>
      )}
      <button className="btn" type="submit" disabled={pending || !!state?.ok}>
        {pending || state?.ok ? 'Joining…' : 'Join team'}
      </button>
    </form>
  );
}
