'use client';
import { useActionState, useEffect, useRef, useState, useTransition, type FormEvent } from 'react';
import { useRouter } from 'next/navigation';
import { deleteDocumentAction, importWebsiteAction, removeWebsiteAction, restoreVersionAction, resyncWebsiteAction, uploadDocumentAction } from './actions';
import { fileSize, plural } from '@/lib/dashboard/format';
import bodyLimits from '@/lib/net/body-limits.json';
import styles from './knowledge.module.css';

const MAX_BYTES = bodyLimits.knowledgeDocumentBytes;
const ACCEPT =
  '.txt,.md,.markdown,.html,.htm,.pdf,.docx,.csv,text/plain,text/markdown,text/html,text/csv,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export function UploadDocument() {
  const [state, dispatch, pending] = useActionState(uploadDocumentAction, null);
  const [, start] = useTransition();
  const formRef = useRef<HTMLFormElement>(null);
  const [chosen, setChosen] = useState<File | null>(null);
  // A document over the limit is refused here, before its bytes are sent: the server refuses it
  // too, but a body over the server-action limit would only end in a dropped connection.
  const tooLarge =
    chosen && chosen.size > MAX_BYTES ? `${chosen.name} is ${fileSize(chosen.size)}: larger than the ${fileSize(MAX_BYTES)} a document may have.` : null;
  const [dismissed, setDismissed] = useState<unknown>(null);
  const send = (replace?: string) => {
    const form = new FormData(formRef.current!);
    if (replace) form.set('replace', replace);
    start(() => dispatch(form));
  };
  const submit = (e: FormEvent<HTMLFormElement>) => {
    // Sent by hand: a form action would clear the chosen file, which "Replace" sends again.
    e.preventDefault();
    if (!tooLarge) send();
  };
  const stored = state?.ok && 'stored' in state ? state : null;
  const existing = state?.ok && state.existing && dismissed !== state ? state.existing : null;
  useEffect(() => {
    if (stored) {
      formRef.current?.reset();
      setChosen(null);
    }
  }, [stored]);
  const error = tooLarge ?? (state && !state.ok ? state.error : null);
  return (
    <section className="panel" aria-labelledby="upload-heading">
      <h2 id="upload-heading" style={{ marginTop: 0 }}>
        Add a document
      </h2>
      <p id="kb-file-hint" className="muted" style={{ marginTop: 0 }}>
        Text, Markdown, HTML, PDF, Word (.docx) or CSV. Up to {fileSize(MAX_BYTES)} per document. A file with the title or name of a document already here can
        replace it.
      </p>
      <form ref={formRef} onSubmit={submit} className="row">
        <div className="field">
          <label htmlFor="kb-file">Document</label>
          <span className={styles.picker}>
            <input
              id="kb-file"
              name="file"
              type="file"
              required
              className={styles.fileInput}
              aria-describedby="kb-file-hint"
              onChange={(e) => setChosen(e.currentTarget.files?.[0] ?? null)}
              accept={ACCEPT}
            />
            <label htmlFor="kb-file" className="btn secondary">
              Choose a file
            </label>
            <span className={styles.chosen} aria-live="polite">
              {chosen ? `${chosen.name} (${fileSize(chosen.size)})` : 'No file chosen'}
            </span>
          </span>
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
      {existing && !pending && (
        <div className={styles.replace} role="alert">
          <p style={{ margin: 0 }}>
            <strong>{existing.title}</strong> ({existing.filename}) is already in the knowledge base. Replace it with {state?.ok ? state.filename : 'this file'}
            ? The new version answers from then on; the current one stays under &ldquo;Previous versions&rdquo;.
          </p>
          <span className={styles.actions}>
            <button type="button" className="btn" onClick={() => send(existing.document_id)}>
              Replace
            </button>
            <button type="button" className="btn secondary" onClick={() => setDismissed(state)}>
              Cancel
            </button>
          </span>
        </div>
      )}
      {!tooLarge && stored?.stored && (
        <p className="success" role="status" style={{ marginTop: '1rem' }}>
          {stored.stored.replaced ? 'Replaced with' : 'Added'} {stored.filename} ({plural(stored.stored.chunks, 'passage', 'passages')}).
        </p>
      )}
    </section>
  );
}

/** A button that asks once more before an irreversible action. */
function ConfirmButton({ label, confirm, name, run }: { label: string; confirm: string; name: string; run: () => Promise<unknown> }) {
  const [confirming, setConfirming] = useState(false);
  const [pending, start] = useTransition();
  if (!confirming)
    return (
      <button type="button" className="btn danger" onClick={() => setConfirming(true)} aria-label={`${label} ${name}`}>
        {label}
      </button>
    );
  return (
    <span className={styles.actions}>
      <button type="button" className="btn danger" disabled={pending} onClick={() => start(async () => void (await run()))}>
        {confirm}
      </button>
      <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>
        Cancel
      </button>
    </span>
  );
}

export function DeleteDocumentButton({ id, filename }: { id: string; filename: string }) {
  return <ConfirmButton label="Delete" confirm="Yes, delete" name={filename} run={() => deleteDocumentAction(id)} />;
}

export function RemoveWebsiteButton({ id, url }: { id: string; url: string }) {
  return <ConfirmButton label="Remove" confirm="Yes, remove" name={url} run={() => removeWebsiteAction(id)} />;
}

/** A button running one action on a row, with its refusal shown beside it. */
export function RowAction({
  label,
  busy,
  name,
  run,
  disabled = false,
}: {
  label: string;
  busy: string;
  name: string;
  run: () => Promise<{ ok: boolean; error?: string } | null>;
  disabled?: boolean;
}) {
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        className="btn secondary"
        disabled={pending || disabled}
        aria-label={`${label} ${name}`}
        onClick={() =>
          start(async () => {
            const r = await run();
            setError(r && !r.ok ? (r.error ?? null) : null);
          })
        }
      >
        {pending ? busy : label}
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </>
  );
}

export function RestoreButton({ id, name }: { id: string; name: string }) {
  return <RowAction label="Restore" busy="Restoring…" name={name} run={() => restoreVersionAction(id)} />;
}

export function ResyncButton({ id, url, importing }: { id: string; url: string; importing: boolean }) {
  return <RowAction label="Re-sync" busy="Starting…" name={url} disabled={importing} run={() => resyncWebsiteAction(id)} />;
}

export function ImportWebsite() {
  const [open, setOpen] = useState(false);
  const [url, setUrl] = useState('');
  const [state, dispatch, pending] = useActionState(importWebsiteAction, null);
  const [, start] = useTransition();
  const submit = (e: FormEvent<HTMLFormElement>) => {
    // Sent by hand so that a refused address stays in the box to correct.
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    start(() => dispatch(form));
  };
  return (
    <section className="panel" aria-labelledby="website-heading">
      <h2 id="website-heading" style={{ marginTop: 0 }}>
        Websites
      </h2>
      <p className="muted" style={{ marginTop: 0 }}>
        Import the pages of your help centre or website: a page and the pages it links to on the same site, or every page a sitemap lists.
      </p>
      {!open ? (
        <button type="button" className="btn secondary" onClick={() => setOpen(true)}>
          Add from a website
        </button>
      ) : (
        <form onSubmit={submit} className="row">
          <div className="field">
            <label htmlFor="kb-site-url">Website or sitemap URL</label>
            <input
              id="kb-site-url"
              name="url"
              type="text"
              inputMode="url"
              autoComplete="url"
              required
              placeholder="https://help.example.com/"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
            />
          </div>
          <button className="btn" type="submit" disabled={pending}>
            {pending ? 'Starting…' : 'Import'}
          </button>
        </form>
      )}
      {state && !state.ok && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {state.error}
        </p>
      )}
      {state?.ok && (
        <p className="success" role="status" style={{ marginTop: '1rem' }}>
          Importing {state.url}: the pages appear below as they are read.
        </p>
      )}
    </section>
  );
}

/** Reloads the page's data while a website import runs, so its progress shows. */
export function RefreshWhileImporting({ active }: { active: boolean }) {
  const router = useRouter();
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => router.refresh(), 1500);
    return () => clearInterval(timer);
  }, [active, router]);
  return null;
}
