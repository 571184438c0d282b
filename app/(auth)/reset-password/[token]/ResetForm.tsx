'use client';
import { useActionState } from 'react';
import { resetPasswordAction } from './actions';
import { FormResult } from '../../../(dashboard)/_components/FormResult';

export function ResetForm({ token }: { token: string }) {
  const [state, action, pending] = useActionState(resetPasswordAction.bind(null, token), null);
  if (state?.ok)
    return (
      <p className="success" role="status">
        Your password is changed and every session signed out. <a href="/login">Sign in</a> with the new password.
      </p>
    );
  return (
    <form action={action}>
      <div className="field">
        <label htmlFor="password">New password</label>
        <input id="password" name="password" type="password" required minLength={8} autoComplete="new-password" />
      </div>
      <FormResult state={state} />
      <button className="btn" type="submit" disabled={pending}>
        {pending ? 'Saving…' : 'Set new password'}
      </button>
    </form>
  );
}
