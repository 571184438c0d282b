'use client';
import { useActionState, useState, useTransition } from 'react';
import { changeRoleAction, inviteMemberAction, removeMemberAction, requireTwoFactorAction, revokeInvitationAction, transferOwnershipAction } from './actions';
import { FormError, FormResult } from '../_components/FormResult';

type Result = { ok: boolean; error?: string } | null;

function useRun() {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  const run = (fn: () => Promise<Result>, after?: () => void) =>
    start(async () => {
      const r = await fn();
      setError(r && !r.ok ? (r.error ?? 'Failed') : null);
      if (r?.ok) after?.();
    });
  return { pending, error, run };
}

export function InviteForm() {
  const [open, setOpen] = useState(false);
  const [state, action, pending] = useActionState(inviteMemberAction, null);
  return (
    <section className="panel" aria-labelledby="invite-heading">
      <h2 id="invite-heading" style={{ marginTop: 0 }}>
        Invite a colleague
      </h2>
      {!open ? (
        <button type="button" className="btn" onClick={() => setOpen(true)}>
          Invite member
        </button>
      ) : (
        <form action={action} className="row">
          <div className="field">
            <label htmlFor="invite-email">Email</label>
            <input id="invite-email" name="email" type="email" required maxLength={320} autoFocus />
          </div>
          <div className="field">
            <label htmlFor="invite-role">Role</label>
            <select id="invite-role" name="role" defaultValue="agent">
              <option value="agent">agent</option>
              <option value="admin">admin</option>
            </select>
          </div>
          <button className="btn" type="submit" disabled={pending}>
            {pending ? 'Sending…' : 'Send invitation'}
          </button>
          <button className="btn secondary" type="button" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </form>
      )}
      <FormResult state={state} saved={state?.ok && `Invitation sent to ${state.email}. The link is valid for 7 days.`} style={{ marginTop: '1rem' }} />
    </section>
  );
}

export function MemberActions({ userId, email, role, canTransfer }: { userId: number; email: string; role: string; canTransfer: boolean }) {
  const { pending, error, run } = useRun();
  const [mode, setMode] = useState<'idle' | 'role' | 'remove' | 'transfer'>('idle');
  const [newRole, setNewRole] = useState(role === 'admin' ? 'agent' : 'admin');
  return (
    <div style={{ display: 'flex', gap: '.4rem', flexWrap: 'wrap', alignItems: 'center' }}>
      {mode === 'idle' && (
        <>
          <button type="button" className="btn secondary" onClick={() => setMode('role')} aria-label={`Change role of ${email}`}>
            Change role
          </button>
          <button type="button" className="btn danger" onClick={() => setMode('remove')} aria-label={`Remove ${email}`}>
            Remove
          </button>
          {canTransfer && (
            <button type="button" className="btn secondary" onClick={() => setMode('transfer')} aria-label={`Transfer ownership to ${email}`}>
              Make owner
            </button>
          )}
        </>
      )}
      {mode === 'role' && (
        <span role="group" aria-label={`New role for ${email}`} style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap' }}>
          <label className="skip" htmlFor={`role-${userId}`}>
            New role
          </label>
          <select id={`role-${userId}`} value={newRole} onChange={(e) => setNewRole(e.target.value)}>
            <option value="admin">admin</option>
            <option value="agent">agent</option>
          </select>
          <button
            type="button"
            className="btn"
            disabled={pending}
            onClick={() =>
              run(
                () => changeRoleAction(userId, newRole),
                () => setMode('idle'),
              )
            }
          >
            Save role
          </button>
          <button type="button" className="btn secondary" onClick={() => setMode('idle')}>
            Cancel
          </button>
        </span>
      )}
      {mode === 'remove' && (
        <span role="group" aria-label={`Confirm removing ${email}`} style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap' }}>
          <button type="button" className="btn danger" disabled={pending} onClick={() => run(() => removeMemberAction(userId))}>
            Yes, remove
          </button>
          <button type="button" className="btn secondary" onClick={() => setMode('idle')}>
            Cancel
          </button>
        </span>
      )}
      {mode === 'transfer' && (
        <span role="group" aria-label={`Confirm transferring ownership to ${email}`} style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap' }}>
          <span>You become an admin.</span>
          <button type="button" className="btn danger" disabled={pending} onClick={() => run(() => transferOwnershipAction(userId))}>
            Yes, transfer ownership
          </button>
          <button type="button" className="btn secondary" onClick={() => setMode('idle')}>
            Cancel
          </button>
        </span>
      )}
      <FormError error={error} inline />
    </div>
  );
}

export function InvitationActions({ id, email }: { id: string; email: string }) {
  const { pending, error, run } = useRun();
  return (
    <span style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap' }}>
      <button
        type="button"
        className="btn danger"
        disabled={pending}
        onClick={() => run(() => revokeInvitationAction(id))}
        aria-label={`Revoke the invitation of ${email}`}
      >
        Revoke
      </button>
      <FormError error={error} inline />
    </span>
  );
}

export function RequireTwoFactorForm({ on }: { on: boolean }) {
  const [state, action, pending] = useActionState(requireTwoFactorAction, null);
  return (
    <section className="panel" aria-labelledby="security-heading">
      <h2 id="security-heading" style={{ marginTop: 0 }}>
        Security
      </h2>
      <form action={action} className="row">
        <label style={{ display: 'inline-flex', gap: '.4rem', alignItems: 'center' }}>
          <input type="checkbox" name="require" defaultChecked={on} /> Require two-factor authentication
        </label>
        <button className="btn" type="submit" disabled={pending}>
          Save security settings
        </button>
      </form>
      <p className="muted" style={{ fontSize: '.85rem', marginBottom: 0 }}>
        Members without two-factor authentication are sent to their profile to set it up before anything else.
      </p>
      <FormResult state={state} saved="Saved." />
    </section>
  );
}
