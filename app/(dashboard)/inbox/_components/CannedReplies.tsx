'use client';
import { useActionState, useState, useTransition } from 'react';
import type { CannedReply } from '@/lib/conversations/canned-replies';
import { createReplyAction, deleteReplyAction, updateReplyAction } from '../actions';
import styles from '../inbox.module.css';

function Fields({ reply, prefix }: { reply?: CannedReply; prefix: string }) {
  return (
    <div className="row" style={{ alignItems: 'flex-start' }}>
      <div className="field" style={{ flex: '0 1 12rem' }}>
        <label htmlFor={`${prefix}-shortcut`}>Shortcut</label>
        <input type="text" id={`${prefix}-shortcut`} name="shortcut" required maxLength={32} defaultValue={reply?.shortcut} />
      </div>
      <div className="field" style={{ flex: '1 1 18rem' }}>
        <label htmlFor={`${prefix}-text`}>Text</label>
        <textarea id={`${prefix}-text`} name="text" required rows={2} defaultValue={reply?.text} />
      </div>
    </div>
  );
}

function Row({ reply }: { reply: CannedReply }) {
  const [editing, setEditing] = useState(false);
  const [state, save, saving] = useActionState(updateReplyAction.bind(null, reply.id), null);
  const [deleting, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (editing && !state?.ok) {
    return (
      <li>
        <form action={save} aria-label={`Edit /${reply.shortcut}`}>
          <Fields reply={reply} prefix={`r-${reply.id}`} />
          {state && !state.ok && <p className="error">{state.error}</p>}
          <div className="row">
            <button className="btn" type="submit" disabled={saving}>
              Save
            </button>
            <button className="btn secondary" type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </form>
      </li>
    );
  }
  return (
    <li>
      <div className="row" style={{ alignItems: 'center' }}>
        <code>/{reply.shortcut.replace(/^\//, '')}</code>
        <span style={{ flex: '1 1 14rem', overflowWrap: 'anywhere' }}>{reply.text}</span>
        <button className="btn secondary" type="button" onClick={() => setEditing(true)} aria-label={`Edit /${reply.shortcut}`}>
          Edit
        </button>
        <button
          className="btn danger"
          type="button"
          disabled={deleting}
          aria-label={`Delete /${reply.shortcut}`}
          onClick={() =>
            start(async () => {
              const r = await deleteReplyAction(reply.id);
              setError(r && !r.ok ? r.error : null);
            })
          }
        >
          Delete
        </button>
      </div>
      {error && <p className="error">{error}</p>}
    </li>
  );
}

/** The list with Edit and Delete per reply, and a form that adds one. */
export function CannedReplies({ replies }: { replies: CannedReply[] }) {
  const [state, create, creating] = useActionState(createReplyAction, null);
  return (
    <>
      <section className="panel" aria-label="Canned replies">
        {replies.length === 0 ? (
          <p className="empty">No canned replies yet.</p>
        ) : (
          <ul className={styles.replies}>
            {replies.map((r) => (
              <Row key={r.id} reply={r} />
            ))}
          </ul>
        )}
      </section>
      <form className="panel" action={create} aria-label="New canned reply">
        <h2 className={styles.panelTitle}>New canned reply</h2>
        <Fields prefix="new" key={state?.ok ? JSON.stringify(state) : 'new'} />
        {state && !state.ok && <p className="error">{state.error}</p>}
        <button className="btn" type="submit" disabled={creating}>
          Add reply
        </button>
      </form>
    </>
  );
}
