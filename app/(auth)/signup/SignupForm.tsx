'use client';
import { useActionState } from 'react';
import { signupAction } from './actions';
import { FormResult } from '../../(dashboard)/_components/FormResult';

export function SignupForm() {
  const [state, action, pending] = useActionState(signupAction, null);
  if (state?.ok)
    return (
      <p className="success" role="status">
        {state.message}
      </p>
    );
  return (
    <form action={action}>
      <div className="field">
        <label htmlFor="account-name">Account name</label>
        <input id="account-name" name="accountName" type="text" required maxLength={200} autoComplete="organization" />
      </div>
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" required autoComplete="username" />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" required minLength={8} autoComplete="new-password" />
      </div>
      <FormResult state={state} />
      <button className="btn" type="submit" disabled={pending}>
        {pending ? 'Creating…' : 'Create account'}
      </button>
    </form>
  );
}
