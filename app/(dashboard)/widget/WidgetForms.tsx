'use client';
import { useActionState, useEffect, useState, useTransition } from 'react';
import { CopyButton } from '../_components/CopyButton';
import { createClientAction, deleteClientAction, renameClientAction, rotateSecretAction, updateDomainsAction } from './actions';
import { SnippetGenerator, type ClientOption } from './SnippetGenerator';
import { AppearanceSection } from './AppearanceForm';
import type { Appearance } from '@/lib/widget-clients/appearance';

function SecretOnce({ secret }: { secret: string }) {
  return (
    <div className="success" role="status" style={{ marginTop: '.75rem' }}>
      <strong>Client secret (shown once; keep it on your server):</strong>
      <p style={{ display: 'flex', gap: '.5rem', alignItems: 'center', flexWrap: 'wrap', marginBottom: 0 }}>
        <code data-testid="client-secret" style={{ wordBreak: 'break-all' }}>
          {secret}
        </code>
        <CopyButton text={secret} label="Copy secret" />
      </p>
    </div>
  );
}

function ClientName({ clientId, name }: { clientId: string; name: string }) {
  const [editing, setEditing] = useState(false);
  const [state, action, pending] = useActionState(renameClientAction, null);
  const saved = state?.ok ? state.name : null;
  useEffect(() => {
    if (saved) setEditing(false);
  }, [saved]);
  if (!editing) {
    return (
      <div>
        <strong style={{ overflowWrap: 'anywhere' }}>{name}</strong>{' '}
        <button
          type="button"
          className="linkish"
          onClick={() => setEditing(true)}
          aria-label={`Rename ${name} (${clientId})`}
          style={{
            border: 0,
            background: 'none',
            color: 'var(--accent)',
            cursor: 'pointer',
            padding: 0,
            font: 'inherit',
            fontSize: '.85rem',
            textDecoration: 'underline',
          }}
        >
          Rename
        </button>
        <div>
          <code style={{ fontSize: '.78rem' }}>{clientId}</code>
        </div>
      </div>
    );
  }
  return (
    <form action={action}>
      <input type="hidden" name="clientId" value={clientId} />
      <label htmlFor={`n-${clientId}`}>Name of {clientId}</label>
      <input id={`n-${clientId}`} name="name" type="text" defaultValue={name} maxLength={80} required />
      <div style={{ display: 'flex', gap: '.4rem', marginTop: '.4rem' }}>
        <button className="btn" type="submit" disabled={pending}>
          Save name
        </button>
        <button className="btn secondary" type="button" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
      {state && !state.ok && (
        <p className="error" role="alert">
          {state.error}
        </p>
      )}
    </form>
  );
}

export function ClientRow({ clientId, name, domains, channel }: { clientId: string; name: string; domains: string[]; channel: string }) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(domains.join('\n'));
  const [state, action, pending] = useActionState(updateDomainsAction, null);
  const [rotated, setRotated] = useState<string | null>(null);
  return (
    <tr>
      <td data-label="Client">
        <ClientName clientId={clientId} name={name} />
      </td>
      <td data-label="Channel">{channel}</td>
      <td data-label="Domains">
        {editing ? (
          <form action={action}>
            <input type="hidden" name="clientId" value={clientId} />
            <label htmlFor={`d-${clientId}`}>Domains of {clientId}</label>
            <textarea id={`d-${clientId}`} name="domains" rows={3} value={draft} onChange={(e) => setDraft(e.target.value)} />
            <div style={{ display: 'flex', gap: '.4rem', marginTop: '.4rem' }}>
              <button className="btn" type="submit" disabled={pending}>
                Save domains
              </button>
              <button className="btn secondary" type="button" onClick={() => setEditing(false)}>
                Done
              </button>
            </div>
            {state && !state.ok && (
              <p className="error" role="alert">
                {state.error}
              </p>
            )}
            {state?.ok && (
              <p className="success" role="status">
                Saved.
              </p>
            )}
          </form>
        ) : (
          <div style={{ display: 'flex', flexWrap: 'wrap', gap: '.3rem' }}>
            {domains.map((d) => (
              <span key={d} className="badge">
                {d}
              </span>
            ))}
          </div>
        )}
        {rotated && <SecretOnce secret={rotated} />}
      </td>
      <td data-label="">
        {/* Wraps on phones: three buttons do not fit beside each other at 390 px. */}
        <div style={{ display: 'flex', flexWrap: 'wrap', gap: '.4rem', justifyContent: 'flex-end', alignItems: 'flex-start', whiteSpace: 'nowrap' }}>
          {!editing && (
            <button
              type="button"
              className="btn secondary"
              onClick={() => {
                setDraft(domains.join('\n'));
                setEditing(true);
              }}
              aria-label={`Edit domains of ${clientId}`}
            >
              Edit domains
            </button>
          )}{' '}
          <RotateButton clientId={clientId} onRotated={setRotated} />
          <DeleteButton clientId={clientId} />
        </div>
      </td>
    </tr>
  );
}

/** Rotating confirms inline, like revoking a key (no window.confirm). */
function RotateButton({ clientId, onRotated }: { clientId: string; onRotated: (secret: string) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (!confirming) {
    return (
      <button type="button" className="btn danger" aria-label={`Rotate secret of ${clientId}`} onClick={() => setConfirming(true)}>
        Rotate secret
      </button>
    );
  }
  return (
    <span
      role="group"
      aria-label={`Confirm rotating the secret of ${clientId}`}
      style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap', alignItems: 'center', whiteSpace: 'normal' }}
    >
      <span className="muted" style={{ fontSize: '.85rem' }}>
        The old secret stops working at once.
      </span>
      <button
        type="button"
        className="btn danger"
        disabled={pending}
        onClick={() =>
          start(async () => {
            const r = await rotateSecretAction(clientId);
            if (r?.ok) {
              onRotated(r.secret);
              setConfirming(false);
            } else setError(r?.error ?? 'Could not rotate the secret.');
          })
        }
      >
        Yes, rotate
      </button>
      <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>
        Cancel
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

/** Deleting confirms inline too; the client's open widgets are disconnected at once. */
function DeleteButton({ clientId }: { clientId: string }) {
  const [confirming, setConfirming] = useState(false);
  const [pending, start] = useTransition();
  const [error, setError] = useState<string | null>(null);
  if (!confirming) {
    return (
      <button type="button" className="btn danger" aria-label={`Delete ${clientId}`} onClick={() => setConfirming(true)}>
        Delete
      </button>
    );
  }
  return (
    <span
      role="group"
      aria-label={`Confirm deleting ${clientId}`}
      style={{ display: 'inline-flex', gap: '.4rem', flexWrap: 'wrap', alignItems: 'center', whiteSpace: 'normal' }}
    >
      <span className="muted" style={{ fontSize: '.85rem' }}>
        Widgets using it disconnect at once; its conversations stay.
      </span>
      <button
        type="button"
        className="btn danger"
        disabled={pending}
        onClick={() =>
          start(async () => {
            const r = await deleteClientAction(clientId);
            if (r?.ok) setConfirming(false);
            else setError(r?.error ?? 'Could not delete the client.');
          })
        }
      >
        Yes, delete
      </button>
      <button type="button" className="btn secondary" onClick={() => setConfirming(false)}>
        Cancel
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}

export function CreateClientForm({ channels, onCreated }: { channels: Array<{ id: number; name: string }>; onCreated?: (clientId: string) => void }) {
  const [state, action, pending] = useActionState(createClientAction, null);
  const created = state?.ok ? state.clientId : null;
  // Controlled fields: React resets a form after its action, and a refused entry must stay to be fixed.
  const [name, setName] = useState('');
  const [domains, setDomains] = useState('');
  const [channel, setChannel] = useState('');
  useEffect(() => {
    if (!created) return;
    onCreated?.(created);
    setName('');
    setDomains('');
    setChannel('');
  }, [created, onCreated]);
  return (
    <section className="panel" aria-labelledby="new-client">
      <h2 id="new-client" style={{ marginTop: 0 }}>
        Create a widget client
      </h2>
      <form action={action}>
        <div className="row" style={{ alignItems: 'flex-start', marginBottom: '.75rem' }}>
          <div className="field" style={{ flex: '1 1 200px' }}>
            <label htmlFor="client-name">Name</label>
            <input
              id="client-name"
              name="name"
              type="text"
              maxLength={80}
              placeholder="e.g. Online shop"
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="client-domains">Domains (one per line)</label>
            <textarea
              id="client-domains"
              name="domains"
              rows={2}
              required
              placeholder={'example.com\n*.example.com'}
              aria-describedby="client-domains-help"
              value={domains}
              onChange={(e) => setDomains(e.target.value)}
            />
            <p id="client-domains-help" className="muted" style={{ fontSize: '.8rem', margin: '.3rem 0 0' }}>
              A pasted address such as https://shop.example/path is reduced to its host.
            </p>
          </div>
          <div className="field" style={{ flex: '0 1 220px' }}>
            <label htmlFor="client-channel">Channel</label>
            <select id="client-channel" name="channel" value={channel} onChange={(e) => setChannel(e.target.value)}>
              <option value="">New channel</option>
              {channels.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} (#{c.id})
                </option>
              ))}
            </select>
          </div>
        </div>
        <button className="btn" type="submit" disabled={pending}>
          {pending ? 'Creating…' : 'Create client'}
        </button>
      </form>
      {state && !state.ok && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {state.error}
        </p>
      )}
      {state?.ok && (
        <>
          <p className="success" role="status" style={{ marginTop: '1rem' }}>
            Created client <code data-testid="new-client-id">{state.clientId}</code>.
          </p>
          <SecretOnce secret={state.secret} />
        </>
      )}
    </section>
  );
}

/** The create form and the snippet generator share the selected client: a new client is selected. */
export function ClientsWorkspace({
  origin,
  clients,
  versions,
  tracks,
  channels,
}: {
  origin: string;
  clients: Array<ClientOption & { appearance: Appearance }>;
  versions: string[];
  tracks: Record<string, string>;
  channels: Array<{ id: number; name: string }>;
}) {
  const [selected, setSelected] = useState(clients[0]?.id ?? '');
  return (
    <>
      <CreateClientForm channels={channels} onCreated={setSelected} />
      <SnippetGenerator origin={origin} clients={clients} versions={versions} tracks={tracks} clientId={selected} onClientChange={setSelected} />
      <AppearanceSection clients={clients} clientId={selected} onClientChange={setSelected} tracks={tracks} />
    </>
  );
}
