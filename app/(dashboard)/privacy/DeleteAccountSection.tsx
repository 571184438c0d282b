'use client';
import { signOut } from 'next-auth/react';
import { useActionState, useEffect } from 'react';
import { FormResult } from '../_components/FormResult';
import { deleteAccountAction } from './delete-account-action';

/** The owner's "Delete account" on /privacy (docs/contracts.md §18); the page renders it for the owner only. */
export function DeleteAccountSection({ accountName }: { accountName: string }) {
  const [state, action, pending] = useActionState(deleteAccountAction, null);
  useEffect(() => {
    if (state?.ok) void signOut({ callbackUrl: '/login?notice=account-deleted' });
  }, [state]);
  return (
    <section className="panel" aria-labelledby="delete-account-heading">
      <h2 id="delete-account-heading" style={{ marginTop: 0 }}>
        Delete the account
      </h2>
      <p className="muted">
        Deletes <strong>{accountName}</strong> with everything in it: conversations, responses, uploads, the knowledge base, API keys, widget clients, webhooks,
        members and the audit log. API keys and widgets stop working at once and every member is signed out. This cannot be undone.
      </p>
      <form action={action} className="row">
        <div className="field">
          <label htmlFor="delete-account-confirm">Type the account name to confirm</label>
          <input id="delete-account-confirm" name="confirm" type="text" required maxLength={1000} autoComplete="off" spellCheck={false} />
        </div>
        <button className="btn danger" type="submit" disabled={pending || state?.ok === true}>
          {pending ? 'Deleting…' : 'Delete account'}
        </button>
      </form>
      <FormResult state={state} saved={state?.ok && 'The account is deleted. Signing out…'} style={{ marginTop: '1rem' }} />
    </section>
  );
}
