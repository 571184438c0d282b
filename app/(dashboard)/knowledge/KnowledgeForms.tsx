'use client';
import { useActionState, useState, useTransition, type FormEvent } from 'react';
import { deleteDocumentAction, uploadDocumentAction } from './actions';
import { plural } from '@/lib/dashboard/format';
import bodyLimits from '@/lib/net/body-limits.json';

const MAX_BYTES = bodyLimits.knowledgeDocumentBytes;
const megabytes = (n: number) => `${(n / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MB`;

export function UploadDocument() {
  const [state, action, pending] = useActionState(uploadDocumentAction, null);
  // A document over the limit is refused here, before its bytes are sent: the server refuses it
  // too, but a body over the server-action limit would only end in a dropped connection.
  const [tooLarge, setTooLarge] = useState<string | null>(null);
  const check = (e: FormEvent<HTMLFormElement>) => {
    const file = (e.currentTarget.elements.namedItem('file') as HTMLInputElement | null)?.files?.[0];
    if (file && file.size > MAX_BYTES) {
      e.preventDefault();
      setTooLarge(`${file.name} is ${megabytes(file.size)}: larger than the ${megabytes(MAX_BYTES)} a document may have.`);
    } else {
      setTooLarge(null);
    }
  };
  const error = tooLarge ?? (state && !state.ok ? state.error : null);
  return (
    <section className="panel" aria-labelledby="upload-heading">
      <h2 id="upload-heading" style={{ marginTop: 0 }}>
        Add a document
      </h2>
      <p id="kb-file-hint" className="muted" style={{ marginTop: 0 }}>
        Up to {megabytes(MAX_BYTES)} per document.
      </p>
      <form action={action} onSubmit={check} className="row">
        <div className="field">
          <label htmlFor="kb-file">Document</label>
          <input
            id="kb-file"
            name="file"
            type="file"
            required
            aria-describedby="kb-file-hint"
            onChange={() => setTooLarge(null)}
            accept=".txt,.md,.markdown,.html,.htm,.pdf,.docx,text/plain,text/markdown,text/html,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document"
          />
        </div>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Uploading…' : 'Upload'}
        </button>
      </form>
      {error && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {error}
        </p>
      )}
      {!tooLarge && state?.ok && (
        <p className="success" role="status" style={{ marginTop: '1rem' }}>
          Added {state.filename} ({plural(state.chunks, 'passage', 'passages')}).
        </p>
      )}
    </section>
  );
}

export function DeleteDocumentButton({ id, filename }: { id: string; filename: string }) {
  const [confirming, setConfirming] = useState(false);
  const [pending, start] = useTransition();
  if (!confirming)
    return (
      <button type="button" className="btn danger" onClick={() => setConfirming(true)} aria-label={`Delete ${filename}`}>
        Delete
      </button>
    );
  return (
    <span style={{ display: 'inline-flex', gap: '.4rem' }}>
      <button
        type="button"
        className="btn danger"
        disabled={pending}
        onClick={() =>
          start(async () => {
            await deleteDocumentAction(id);
          })
        }
      >
        Yes, delete
      </button>
      <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>
        Cancel
      </button>
    </span>
  );
}
