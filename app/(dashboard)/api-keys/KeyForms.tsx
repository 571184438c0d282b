'use client';
import { useActionState, useState, useTransition } from 'react';
import { CopyButton } from '../_components/CopyButton';
import { createKeyAction, revokeKeyAction } from './actions';
import { FormError, FormResult } from '../_components/FormResult';

/** Only keys of the deployment's environment (SVC_ENV) are offered: the other kind would get 401 here. */
export function CreateKeyForm({ env }: { env: 'live' | 'test' }) {
  const [state, action, pending] = useActionState(createKeyAction, null);
  return (
    <section className="panel" aria-labelledby="new-key">
      <h2 id="new-key" style={{ marginTop: 0 }}>
        Create an API key
      </h2>
      <form action={action} className="row">
        <div className="field">
          <label htmlFor="key-name">Name</label>
          <input id="key-name" name="name" type="text" required maxLength={100} placeholder="e.g. Reporting" />
        </div>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Creating…' : 'Create API key'}
        </button>
      </form>
      <p className="muted" data-testid="key-env-note" style={{ fontSize: '.85rem', marginBottom: 0 }}>
        New keys are <strong>{env}</strong> keys: this service accepts {env} keys only.
      </p>
      <FormResult state={state} style={{ marginTop: '1rem' }} />
      {state?.ok && (
        <div className="success" role="status" style={{ marginTop: '1rem' }}>
          <p style={{ marginTop: 0 }}>
            <strong>Copy this key now — it will not be shown again.</strong>
          </p>
          <p style={{ display: 'flex', gap: '.5rem', alignItems: 'center', flexWrap: 'wrap' }}>
            <code data-testid="new-api-key" style={{ wordBreak: 'break-all' }}>
              {state.key}
            </code>
            <CopyButton text={state.key} label="Copy key" />
          </p>
        </div>
      )}
    </section>
  );
}

export function RevokeButton({ keyId, name }: { keyId: string; name: string }) {
  const [confirming, setConfirming] = useState(false);
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (!confirming) {
    return (
      <button type="button" className="btn danger" onClick={() => setConfirming(true)} aria-label={`Revoke ${name} (${keyId})`}>
        Revoke
      </button>
    );
  }
  return (
    <span role="group" aria-label={`Confirm revoking ${keyId}`} style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap' }}>
      <button
        type="button"
        className="btn danger"
        disabled={pending}
        onClick={() =>
          start(async () => {
            const r = await revokeKeyAction(keyId);
            if (r && !r.ok) setError(r.error);
          })
        }
      >
        Yes, revoke
      </button>
      <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>
        Cancel
      </button>
      <FormError error={error} inline />
    </span>
  );
}
