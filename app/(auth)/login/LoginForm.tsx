'use client';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { parseSignInError, SIGNIN_ERRORS } from '@/lib/auth/signin-errors';
import { FormError } from '../../(dashboard)/_components/FormResult';

/** Password first; when two-factor is on, the server answers with a ticket and the code step follows. */
export function LoginForm({ callbackUrl }: { callbackUrl: string }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [ticket, setTicket] = useState<string | null>(null);

  async function submit(fields: Record<string, unknown>) {
    setBusy(true);
    setError(null);
    const res = await signIn('credentials', { redirect: false, ...fields });
    if (res?.ok && !res.error) {
      window.location.assign(callbackUrl);
      return;
    }
    setBusy(false);
    const known = parseSignInError(res?.error);
    if (known?.code === 'two_factor_required') {
      setTicket(known.ticket);
      return;
    }
    if (known?.code === 'ticket_expired') setTicket(null);
    if (known) {
      setError(SIGNIN_ERRORS[known.code]);
      return;
    }
    setError(res?.error && res.error !== 'CredentialsSignin' ? res.error : 'Wrong email or password.');
  }

  if (ticket) {
    return (
      <form
        key="code"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit({ ticket, code: new FormData(e.currentTarget).get('code') });
        }}
      >
        <p className="muted">{SIGNIN_ERRORS.two_factor_required}</p>
        <div className="field">
          <label htmlFor="code">Authentication code</label>
          <input id="code" name="code" type="text" inputMode="text" autoComplete="one-time-code" required autoFocus maxLength={64} />
        </div>
        <FormError error={error} />
        <button className="btn" type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Verify'}
        </button>
      </form>
    );
  }

  return (
    <form
      key="password"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const form = new FormData(e.currentTarget);
        void submit({ email: form.get('email'), password: form.get('password') });
      }}
    >
      <div className="field">
        <label htmlFor="email">Email</label>
        <input id="email" name="email" type="email" autoComplete="username" required />
      </div>
      <div className="field">
        <label htmlFor="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required />
      </div>
      <FormError error={error} />
      <button className="btn" type="submit" disabled={busy}>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      <p style={{ marginBottom: 0 }}>
        <a href="/forgot-password">Forgot password?</a>
      </p>
    </form>
  );
}
