'use client';
import { useActionState, useState, useTransition } from 'react';
import { CopyButton } from '../_components/CopyButton';
import { submitKeepingInput } from '../_components/submit';
import { beginTwoFactorAction, changePasswordAction, confirmTwoFactorAction, saveNameAction, saveNotificationsAction, turnOffTwoFactorAction } from './actions';
import { FormError, FormResult } from '../_components/FormResult';

export function NameForm({ name }: { name: string }) {
  const [state, action, pending] = useActionState(saveNameAction, null);
  return (
    <section className="panel" aria-labelledby="name-heading">
      <h2 id="name-heading" style={{ marginTop: 0 }}>
        Name
      </h2>
      <form action={action} className="row">
        <div className="field">
          <label htmlFor="profile-name">Name</label>
          <input id="profile-name" name="name" type="text" maxLength={100} defaultValue={name} />
        </div>
        <button className="btn" type="submit" disabled={pending}>
          Save name
        </button>
      </form>
      <FormResult state={state} saved="Saved." />
    </section>
  );
}

export function PasswordForm() {
  const [state, action, pending] = useActionState(changePasswordAction, null);
  return (
    <section className="panel" aria-labelledby="password-heading">
      <h2 id="password-heading" style={{ marginTop: 0 }}>
        Password
      </h2>
      <form action={action} className="row">
        <div className="field">
          <label htmlFor="current-password">Current password</label>
          <input id="current-password" name="current" type="password" required autoComplete="current-password" />
        </div>
        <div className="field">
          <label htmlFor="new-password">New password</label>
          <input id="new-password" name="password" type="password" required minLength={8} autoComplete="new-password" />
        </div>
        <button className="btn" type="submit" disabled={pending}>
          Change password
        </button>
      </form>
      <FormResult state={state} saved={state?.ok && `Password changed; your other sessions were signed out (${state.other_sessions_ended}).`} />
    </section>
  );
}

export function TwoFactorPanel({ on, codesLeft }: { on: boolean; codesLeft: number }) {
  const [setup, setSetup] = useState<{ secret: string; qr: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const [confirmed, confirm, confirming] = useActionState(confirmTwoFactorAction, null);
  const [offState, turnOff, turningOff] = useActionState(turnOffTwoFactorAction, null);
  if (confirmed?.ok) {
    return (
      <section className="panel" aria-labelledby="tfa-heading">
        <h2 id="tfa-heading" style={{ marginTop: 0 }}>
          Two-factor authentication
        </h2>
        <div className="success" role="status">
          <p style={{ marginTop: 0 }}>
            <strong>Two-factor authentication is on.</strong> Keep these recovery codes somewhere safe: each signs you in once without your phone. They are not
            shown again.
          </p>
          <ul data-testid="recovery-codes" style={{ columns: 2, fontFamily: 'monospace', paddingLeft: '1.2rem' }}>
            {confirmed.recovery_codes.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
          <CopyButton text={confirmed.recovery_codes.join('\n')} label="Copy recovery codes" />
        </div>
        <p>
          <a href="/">Continue</a>
        </p>
      </section>
    );
  }
  return (
    <section className="panel" aria-labelledby="tfa-heading">
      <h2 id="tfa-heading" style={{ marginTop: 0 }}>
        Two-factor authentication
      </h2>
      {on ? (
        <>
          <p>
            Two-factor authentication is <strong>on</strong>. Recovery codes left: {codesLeft}.
          </p>
          <form action={turnOff} className="row">
            <div className="field">
              <label htmlFor="off-code">Authentication code</label>
              <input id="off-code" name="code" type="text" autoComplete="one-time-code" required maxLength={64} />
            </div>
            <button className="btn danger" type="submit" disabled={turningOff}>
              Turn off two-factor authentication
            </button>
          </form>
          <FormResult state={offState} />
        </>
      ) : !setup ? (
        <>
          <p>
            Two-factor authentication is <strong>off</strong>. With it on, signing in also asks for a code from an authenticator app.
          </p>
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              const form = new FormData(e.currentTarget);
              start(async () => {
                const r = await beginTwoFactorAction(form);
                if (r?.ok) setSetup({ secret: r.secret, qr: r.qr });
                else setError(r?.error ?? 'Failed');
              });
            }}
          >
            <div className="field">
              <label htmlFor="tfa-password">Your password</label>
              <input id="tfa-password" name="password" type="password" required maxLength={1024} autoComplete="current-password" />
            </div>
            <button className="btn" type="submit" disabled={pending}>
              Set up two-factor authentication
            </button>
          </form>
          <FormError error={error} />
        </>
      ) : (
        <>
          <p>Scan this QR code with your authenticator app, or enter the secret by hand, then type the code it shows.</p>
          {/* eslint-disable-next-line @next/next/no-img-element -- a data: URL made on the server */}
          <img src={setup.qr} alt="QR code for your authenticator app" width={220} height={220} style={{ background: '#fff', padding: 4 }} />
          <p style={{ display: 'flex', gap: '.5rem', alignItems: 'center', flexWrap: 'wrap' }}>
            Secret:{' '}
            <code data-testid="totp-secret" style={{ wordBreak: 'break-all' }}>
              {setup.secret}
            </code>{' '}
            <CopyButton text={setup.secret} label="Copy secret" />
          </p>
          <form action={confirm} className="row">
            <div className="field">
              <label htmlFor="setup-code">Authentication code</label>
              <input id="setup-code" name="code" type="text" inputMode="numeric" autoComplete="one-time-code" required maxLength={6} />
            </div>
            <button className="btn" type="submit" disabled={confirming}>
              Turn on two-factor authentication
            </button>
          </form>
          <FormResult state={confirmed} />
        </>
      )}
    </section>
  );
}

export function NotificationsForm({ notifyEmail }: { notifyEmail: boolean }) {
  const [state, action, pending] = useActionState(saveNotificationsAction, null);
  const [on, setOn] = useState(notifyEmail);
  return (
    <section className="panel" aria-labelledby="notifications-heading">
      <h2 id="notifications-heading" style={{ marginTop: 0 }}>
        Notifications
      </h2>
      <form onSubmit={submitKeepingInput(action)}>
        <div className="field">
          <label>
            <input name="notifyEmail" type="checkbox" checked={on} onChange={(e) => setOn(e.target.checked)} /> Email me when a conversation waits
          </label>
          <p className="muted" style={{ margin: '.25rem 0 0' }}>
            A conversation handed to the team that nobody has taken for a while is emailed to you with its summary and a link to it.
          </p>
        </div>
        <button className="btn" type="submit" disabled={pending}>
          Save notifications
        </button>
      </form>
      <FormResult
        state={state}
        saved={state?.ok && (state.notify_email ? 'Saved: you get an email when a conversation waits.' : 'Saved: no emails about waiting conversations.')}
        style={{ marginTop: '1rem' }}
      />
    </section>
  );
}
