'use client';
import { useActionState } from 'react';
import { requestResetAction } from './actions';
import { FormResult } from '../../(dashboard)/_components/FormResult';

export function ForgotForm() {
  const [state, action, pending] = useActionState(requestResetAction, null);
  if (state?.ok)
    return (
      <p className="success" role="status">
        {state.message}
      </p>
    );
  return (
    <form action={action}>
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" required autoComplete="username" />
      </div>
      <FormResult state={state} />
      <button className="btn" type="submit" disabled={pending}>
        {pending ? 'Sending…' : 'Send reset link'}
      </button>
    </form>
  );
}
