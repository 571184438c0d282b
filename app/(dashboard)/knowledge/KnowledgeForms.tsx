'use client';
import { useActionState, useState, useTransition } from 'react';
import { deleteDocumentAction, tryQuestionAction, uploadDocumentAction } from './actions';

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
      {state?.ok && <p className="success" role="status" style={{ marginTop: '1rem' }}>Added {state.filename} ({state.chunks} passages).</p>}
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

export function TryQuestion() {
  const [state, action, pending] = useActionState(tryQuestionAction, null);
  return (
    <section className="panel" aria-labelledby="try-heading">
      <h2 id="try-heading" style={{ marginTop: 0 }}>Try a question</h2>
      <form action={action} className="row">
        <div className="field"><label htmlFor="try-q">Question</label><input id="try-q" name="question" type="text" required maxLength={4000} /></div>
        <button className="btn" type="submit" disabled={pending}>{pending ? 'Asking…' : 'Ask'}</button>
      </form>
      {state && !state.ok && <p className="error" role="alert" style={{ marginTop: '1rem' }}>{state.error}</p>}
      {state?.ok && (
        <div style={{ marginTop: '1rem' }} aria-live="polite">
          <div className="msg assistant" style={{ marginLeft: 0 }} data-testid="try-answer"><div className="content">{state.answer}</div></div>
          <h3 style={{ fontSize: '1rem' }}>Passages used</h3>
          {state.sources.length === 0 ? <p className="muted">None matched.</p> : (
            <ol>{state.sources.map((s, i) => <li key={i}><strong>{s.title}</strong>: <span className="muted">{s.passage.slice(0, 300)}{s.passage.length > 300 ? '…' : ''}</span></li>)}</ol>
          )}
        </div>
      )}
    </section>
  );
}
