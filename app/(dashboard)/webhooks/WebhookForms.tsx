'use client';
import { useActionState, useEffect, useState, useTransition } from 'react';
import { useRouter } from 'next/navigation';
import { CopyButton } from '../_components/CopyButton';
import { createWebhookAction, deleteWebhookAction, resendDeliveryAction, rotateWebhookAction, sendTestEventAction, setWebhookPausedAction } from './actions';
import { FormError, FormResult } from '../_components/FormResult';

function SecretOnce({ secret, note }: { secret: string; note: string }) {
  return (
    <div className="success" role="status" style={{ marginTop: '1rem' }}>
      <p style={{ marginTop: 0 }}>
        <strong>Copy this signing secret now — it will not be shown again.</strong> {note}
      </p>
      <p style={{ display: 'flex', gap: '.5rem', alignItems: 'center', flexWrap: 'wrap', marginBottom: 0 }}>
        <code data-testid="webhook-secret" style={{ wordBreak: 'break-all' }}>
          {secret}
        </code>
        <CopyButton text={secret} label="Copy secret" />
      </p>
    </div>
  );
}

export function CreateEndpointForm({ eventTypes }: { eventTypes: readonly string[] }) {
  const [state, action, pending] = useActionState(createWebhookAction, null);
  // Controlled, so a refused address stays in the box to be corrected (a form action resets the form).
  const [url, setUrl] = useState('');
  useEffect(() => {
    if (state?.ok) setUrl('');
  }, [state]);
  return (
    <section className="panel" aria-labelledby="new-endpoint">
      <h2 id="new-endpoint" style={{ marginTop: 0 }}>
        Add an endpoint
      </h2>
      <form action={action}>
        <div className="field">
          <label htmlFor="endpoint-url">Endpoint URL</label>
          <input
            id="endpoint-url"
            name="url"
            type="url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            required
            maxLength={2000}
            placeholder="https://example.com/webhooks/svc"
            style={{ width: '100%' }}
          />
        </div>
        <fieldset className="field" style={{ border: 0, padding: 0, margin: '0 0 1rem' }}>
          <legend>Events</legend>
          <div style={{ display: 'flex', gap: '1rem', flexWrap: 'wrap' }}>
            {eventTypes.map((t) => (
              <label key={t} style={{ display: 'inline-flex', gap: '.35rem', alignItems: 'center' }}>
                <input type="checkbox" name="events" value={t} defaultChecked /> <code>{t}</code>
              </label>
            ))}
          </div>
        </fieldset>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Creating…' : 'Create endpoint'}
        </button>
      </form>
      <FormResult state={state} style={{ marginTop: '1rem' }} />
      {state?.ok && <SecretOnce secret={state.secret} note={`Endpoint ${state.url} is active.`} />}
    </section>
  );
}

/** Rotate, pause/resume and delete for one endpoint row. */
export function EndpointActions({ endpointId, url, paused }: { endpointId: string; url: string; paused: boolean }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const [tested, setTested] = useState(false);
  const router = useRouter();
  const [rotated, setRotated] = useState<{ secret: string; hours: number } | null>(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const run = (fn: () => Promise<{ ok: boolean; error?: string } | null>) =>
    start(async () => {
      const r = await fn();
      setError(r && !r.ok ? (r.error ?? 'Failed') : null);
    });
  return (
    <div style={{ display: 'flex', gap: '.4rem', flexWrap: 'wrap' }}>
      <button
        type="button"
        className="btn secondary"
        disabled={pending}
        aria-label={`Send test event to ${url}`}
        onClick={() =>
          run(async () => {
            const r = await sendTestEventAction(endpointId);
            setTested(Boolean(r?.ok));
            router.refresh();
            return r;
          })
        }
      >
        Send test event
      </button>
      <button
        type="button"
        className="btn secondary"
        disabled={pending}
        aria-label={`Rotate secret of ${url}`}
        onClick={() =>
          run(async () => {
            const r = await rotateWebhookAction(endpointId);
            if (r?.ok) setRotated({ secret: r.secret, hours: r.hours });
            return r;
          })
        }
      >
        Rotate secret
      </button>
      <button
        type="button"
        className="btn secondary"
        disabled={pending}
        aria-label={`${paused ? 'Resume' : 'Pause'} ${url}`}
        onClick={() => run(() => setWebhookPausedAction(endpointId, !paused))}
      >
        {paused ? 'Resume' : 'Pause'}
      </button>
      {!confirmDelete ? (
        <button type="button" className="btn danger" aria-label={`Delete ${url}`} onClick={() => setConfirmDelete(true)}>
          Delete
        </button>
      ) : (
        <span role="group" aria-label={`Confirm deleting ${url}`} style={{ display: 'inline-flex', gap: '.4rem' }}>
          <button type="button" className="btn danger" disabled={pending} onClick={() => run(() => deleteWebhookAction(endpointId))}>
            Yes, delete
          </button>
          <button type="button" className="btn secondary" onClick={() => setConfirmDelete(false)}>
            Cancel
          </button>
        </span>
      )}
      <FormError error={error} inline />
      {tested && !error && (
        <span role="status" className="muted">
          Test event queued{paused ? ' (held while paused)' : ''}: see the delivery log.
        </span>
      )}
      {rotated && (
        <SecretOnce
          secret={rotated.secret}
          note={`The previous secret keeps signing for ${rotated.hours} hours, so receivers can switch without missing a delivery.`}
        />
      )}
    </div>
  );
}

export function SendAgainButton({ deliveryId }: { deliveryId: string }) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const router = useRouter();
  return (
    <span style={{ display: 'inline-flex', gap: '.4rem', alignItems: 'center' }}>
      <button
        type="button"
        className="btn secondary"
        disabled={pending}
        onClick={() =>
          start(async () => {
            const r = await resendDeliveryAction(deliveryId);
            setError(r && !r.ok ? r.error : null);
            router.refresh();
          })
        }
      >
        {pending ? 'Queued…' : 'Send again'}
      </button>
      <FormError error={error} inline />
    </span>
  );
}
