'use client';
import { useActionState, useState, useTransition } from 'react';
import { FormError, FormResult } from '../_components/FormResult';
import { submitKeepingInput } from '../_components/submit';
import { eraseVisitorAction, findVisitorAction, saveRetentionAction } from './actions';

/** "Delete conversations automatically" after "Days after the last message" (1–3650), off by default. */
export function RetentionForm({ initialDays }: { initialDays: number | null }) {
  const [state, action, pending] = useActionState(saveRetentionAction, null);
  const [enabled, setEnabled] = useState(initialDays !== null);
  const [days, setDays] = useState(String(initialDays ?? 365));
  return (
    <form onSubmit={submitKeepingInput(action)}>
      <div className="field">
        <label>
          <input name="enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Delete conversations automatically
        </label>
      </div>
      <div className="field">
        <label htmlFor="retention-days">Days after the last message</label>
        <input
          id="retention-days"
          name="days"
          type="number"
          inputMode="numeric"
          min={1}
          max={3650}
          value={days}
          disabled={!enabled}
          onChange={(e) => setDays(e.target.value)}
        />
        <p className="muted" style={{ margin: '.25rem 0 0' }}>
          A conversation goes, with its messages, uploads, ratings and comments, once its last message is this many days old. Checked every hour and right after
          you save.
        </p>
      </div>
      {enabled || <input type="hidden" name="days" value="" />}
      <button className="btn" type="submit" disabled={pending}>
        Save retention
      </button>
      <FormResult state={state} saved={state?.ok ? (state.days === null ? 'Saved: conversations are kept.' : `Saved: kept ${state.days} days.`) : null} />
    </form>
  );
}

type Found = { visitor: string; conversations: number };

/** "Visitor email or id": Find (how many conversations), Export (a JSON file), Erase (confirmed first). */
export function VisitorData() {
  const [visitor, setVisitor] = useState('');
  const [found, setFound] = useState<Found | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, start] = useTransition();
  const show = (m: string | null, e: string | null = null) => {
    setMessage(m);
    setError(e);
  };
  const find = () =>
    start(async () => {
      setConfirming(false);
      const r = await findVisitorAction(visitor);
      if (!r?.ok) return show(null, r?.error ?? 'Something went wrong; please try again.');
      setFound({ visitor, conversations: r.conversations });
      show(r.conversations === 0 ? 'No conversations found for this visitor.' : `${r.conversations} conversation${r.conversations === 1 ? '' : 's'} found.`);
    });
  const exportFile = () =>
    start(async () => {
      const res = await fetch(`/privacy/export?visitor=${encodeURIComponent(visitor)}`);
      if (!res.ok) {
        const problem = (await res.json().catch(() => null)) as { detail?: string } | null;
        return show(null, problem?.detail ?? 'The export failed; please try again.');
      }
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'visitor-export.json';
      a.click();
      URL.revokeObjectURL(url);
      show('Export downloaded.');
    });
  const erase = () =>
    start(async () => {
      const r = await eraseVisitorAction(visitor);
      setConfirming(false);
      setFound(null);
      if (!r?.ok) return show(null, r?.error ?? 'Something went wrong; please try again.');
      show(`Erased ${r.conversations} conversation${r.conversations === 1 ? '' : 's'}, ${r.responses} answers and ${r.uploads} uploads.`);
    });
  const empty = visitor.trim() === '';
  return (
    <div>
      <div className="field">
        <label htmlFor="privacy-visitor">Visitor email or id</label>
        <input
          id="privacy-visitor"
          type="text"
          value={visitor}
          autoComplete="off"
          onChange={(e) => {
            setVisitor(e.target.value);
            setFound(null);
            setConfirming(false);
          }}
        />
        <p className="muted" style={{ margin: '.25rem 0 0' }}>
          By email: every conversation with that address, and every conversation of a visitor who ever gave it. By id: that visitor&rsquo;s conversations.
        </p>
      </div>
      {confirming && found ? (
        <div role="group" aria-label="Confirm erasing the visitor">
          <p className="muted">
            Erase {found.conversations} conversation{found.conversations === 1 ? '' : 's'} of {found.visitor} with everything about them? This cannot be undone.
          </p>
          <span className="button-row">
            <button type="button" className="btn danger" disabled={pending} onClick={erase}>
              Yes, erase
            </button>
            <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </span>
        </div>
      ) : (
        <span className="button-row">
          <button type="button" className="btn" disabled={pending || empty} onClick={find}>
            Find
          </button>
          <button type="button" className="btn secondary" disabled={pending || empty} onClick={exportFile}>
            Export
          </button>
          <button
            type="button"
            className="btn danger"
            disabled={pending || !found || found.conversations === 0 || found.visitor !== visitor}
            onClick={() => setConfirming(true)}
          >
            Erase
          </button>
        </span>
      )}
      {message && (
        <p className="success" role="status">
          {message}
        </p>
      )}
      <FormError error={error} />
    </div>
  );
}
