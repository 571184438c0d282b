'use client';
import { useActionState, useState, useTransition } from 'react';
import { deleteDocumentAction, uploadDocumentAction } from './actions';
import { plural } from '@/lib/dashboard/format';

export function UploadDocument() {
  const [state, action, pending] = useActionState(uploadDocumentAction, null);
  return (
    <section className="panel" aria-labelledby="upload-heading">
      <h2 id="upload-heading" style={{ marginTop: 0 }}>Add a document</h2>
      <form action={action} className="row">
        <div className="field">
          <label htmlFor="kb-file">Document</label>
          <input id="kb-file" name="file" type="file" required accept=".txt,.md,.markdown,.html,.htm,.pdf,.docx,text/plain,text/markdown,text/html,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document" />
        </div>
        <button className="btn" type="submit" disabled={pending}>{pending ? 'Uploading…' : 'Upload'}</button>
      </form>
      {state && !state.ok && <p className="error" role="alert" style={{ marginTop: '1rem' }}>{state.error}</p>}
      {state?.ok && <p className="success" role="status" style={{ marginTop: '1rem' }}>Added {state.filename} ({plural(state.chunks, 'passage', 'passages')}).</p>}
    </section>
  );
}

export function DeleteDocumentButton({ id, filename }: { id: string; filename: string }) {
  const [confirming, setConfirming] = useState(false);
  const [pending, start] = useTransition();
  if (!confirming) return <button type="button" className="btn danger" onClick={() => setConfirming(true)} aria-label={`Delete ${filename}`}>Delete</button>;
  return (
    <span style={{ display: 'inline-flex', gap: '.4rem' }}>
      <button type="button" className="btn danger" disabled={pending} onClick={() => start(async () => { await deleteDocumentAction(id); })}>Yes, delete</button>
      <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>Cancel</button>
    </span>
  );
}
