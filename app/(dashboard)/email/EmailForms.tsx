'use client';
import { useActionState, useState, useTransition } from 'react';
import type { EmailSettings } from '@/lib/email/settings';
import { FormResult } from '../_components/FormResult';
import { submitKeepingInput } from '../_components/submit';
import { regenerateAddressAction, saveEmailSettingsAction, sendTestEmailAction } from './actions';

/** "Regenerate address", confirmed first: the old address refuses mail at once. */
export function RegenerateAddress() {
  const [confirming, setConfirming] = useState(false);
  const [pending, start] = useTransition();
  const [result, setResult] = useState<{ ok: boolean; error?: string } | null>(null);
  if (!confirming) {
    return (
      <>
        <button type="button" className="btn secondary" onClick={() => setConfirming(true)}>
          Regenerate address
        </button>
        <FormResult state={result} saved="A new address is set; the old one refuses mail." />
      </>
    );
  }
  return (
    <div role="group" aria-label="Confirm regenerating the address">
      <p className="muted">The current address stops taking mail at once: forwards to it bounce until you point them at the new one.</p>
      <span style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap' }}>
        <button
          type="button"
          className="btn danger"
          disabled={pending}
          onClick={() =>
            start(async () => {
              const r = await regenerateAddressAction();
              setResult(r);
              setConfirming(false);
            })
          }
        >
          Yes, regenerate
        </button>
        <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>
          Cancel
        </button>
      </span>
    </div>
  );
}

export function EmailSettingsForm({ initial }: { initial: EmailSettings }) {
  const [state, action, pending] = useActionState(saveEmailSettingsAction, null);
  const [v, setV] = useState(initial);
  return (
    <form onSubmit={submitKeepingInput(action)}>
      <div className="field">
        <label>
          <input name="aiAnswers" type="checkbox" checked={v.ai_answers} onChange={(e) => setV({ ...v, ai_answers: e.target.checked })} /> AI answers email
        </label>
        <p className="muted" style={{ margin: '.25rem 0 0' }}>
          Off: every mail waits for a person in the <a href="/inbox">inbox</a>.
        </p>
      </div>
      <div className="field">
        <label>
          <input name="acknowledge" type="checkbox" checked={v.acknowledge} onChange={(e) => setV({ ...v, acknowledge: e.target.checked })} /> Acknowledge new
          emails
        </label>
        <p className="muted" style={{ margin: '.25rem 0 0' }}>
          On: a mail that waits for a person gets one short reply saying your team received it and will answer by email.
        </p>
      </div>
      <button className="btn" type="submit" disabled={pending}>
        Save email settings
      </button>
      <FormResult state={state} saved="Saved." />
    </form>
  );
}

/** "Send a test email": one mail through this server's listener to the address; its arrival time, or the SMTP error. */
export function SendTestEmail({ listening, lastTest }: { listening: boolean; lastTest: { at: string; day: string } | null }) {
  const [pending, start] = useTransition();
  const [result, setResult] = useState<Awaited<ReturnType<typeof sendTestEmailAction>>>(null);
  return (
    <div className="field">
      <button
        type="button"
        className="btn secondary"
        disabled={!listening || pending}
        onClick={() => start(async () => setResult(await sendTestEmailAction()))}
      >
        {pending ? 'Sending a test email…' : 'Send a test email'}
      </button>
      <FormResult state={result} saved={result?.ok ? `Test email received at ${result.received_at} UTC.` : null} />
      {!result && lastTest && (
        <p className="muted">
          Test email received at {lastTest.at} UTC on {lastTest.day}.
        </p>
      )}
    </div>
  );
}
