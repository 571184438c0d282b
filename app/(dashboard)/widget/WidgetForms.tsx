'use client';
import { useActionState, useMemo, useState, useTransition } from 'react';
import { CopyButton } from '../_components/CopyButton';
import { createClientAction, rotateSecretAction, updateDomainsAction } from './actions';

function SecretOnce({ secret }: { secret: string }) {
  return (
    <div className="success" role="status" style={{ marginTop: '.75rem' }}>
      <strong>Client secret (shown once; keep it on your server):</strong>
      <p style={{ display: 'flex', gap: '.5rem', alignItems: 'center', flexWrap: 'wrap', marginBottom: 0 }}>
        <code data-testid="client-secret" style={{ wordBreak: 'break-all' }}>{secret}</code><CopyButton text={secret} label="Copy secret" />
      </p>
    </div>
  );
}

export function ClientRow({ clientId, domains, channel }: { clientId: string; domains: string[]; channel: string }) {
  const [editing, setEditing] = useState(false);
  const [state, action, pending] = useActionState(updateDomainsAction, null);
  const [rotated, setRotated] = useState<string | null>(null);
  const [rotating, start] = useTransition();
  return (
    <tr>
      <td><code>{clientId}</code></td>
      <td>{channel}</td>
      <td>
        {editing ? (
          <form action={action}>
            <input type="hidden" name="clientId" value={clientId} />
            <label htmlFor={`d-${clientId}`}>Domains of {clientId}</label>
            <textarea id={`d-${clientId}`} name="domains" rows={3} defaultValue={domains.join('\n')} />
            <div style={{ display: 'flex', gap: '.4rem', marginTop: '.4rem' }}>
              <button className="btn" type="submit" disabled={pending}>Save domains</button>
              <button className="btn secondary" type="button" onClick={() => setEditing(false)}>Done</button>
            </div>
            {state && !state.ok && <p className="error" role="alert">{state.error}</p>}
            {state?.ok && <p className="success" role="status">Saved.</p>}
          </form>
        ) : domains.map((d) => <span key={d} className="badge" style={{ marginRight: '.3rem' }}>{d}</span>)}
        {rotated && <SecretOnce secret={rotated} />}
      </td>
      <td style={{ whiteSpace: 'nowrap' }}>
        {!editing && <button type="button" className="btn secondary" onClick={() => setEditing(true)} aria-label={`Edit domains of ${clientId}`}>Edit domains</button>}{' '}
        <button type="button" className="btn danger" disabled={rotating} aria-label={`Rotate secret of ${clientId}`} onClick={() => {
          if (!window.confirm('Rotate the secret? The old secret stops working at once.')) return;
          start(async () => { const r = await rotateSecretAction(clientId); if (r?.ok) setRotated(r.secret); });
        }}>Rotate secret</button>
      </td>
    </tr>
  );
}

export function CreateClientForm({ channels }: { channels: Array<{ id: number; name: string }> }) {
  const [state, action, pending] = useActionState(createClientAction, null);
  return (
    <section className="panel" aria-labelledby="new-client">
      <h2 id="new-client" style={{ marginTop: 0 }}>Create a widget client</h2>
      <form action={action} className="row">
        <div className="field"><label htmlFor="client-domains">Domains (one per line)</label><textarea id="client-domains" name="domains" rows={2} required placeholder={'example.com\n*.example.com'} /></div>
        <div className="field" style={{ flex: '0 1 220px' }}>
          <label htmlFor="client-channel">Channel</label>
          <select id="client-channel" name="channel" defaultValue="">
            <option value="">New channel “Website widget”</option>
            {channels.map((c) => <option key={c.id} value={c.id}>{c.name} (#{c.id})</option>)}
          </select>
        </div>
        <button className="btn" type="submit" disabled={pending}>{pending ? 'Creating…' : 'Create client'}</button>
      </form>
      {state && !state.ok && <p className="error" role="alert" style={{ marginTop: '1rem' }}>{state.error}</p>}
      {state?.ok && <><p className="success" role="status" style={{ marginTop: '1rem' }}>Created client <code data-testid="new-client-id">{state.clientId}</code>.</p><SecretOnce secret={state.secret} /></>}
    </section>
  );
}

type Mode = 'client-id' | 'backend';

export function SnippetGenerator({ origin, clients }: { origin: string; clients: string[] }) {
  const [clientId, setClientId] = useState(clients[0] ?? 'wc_YOUR_CLIENT_ID');
  const [selector, setSelector] = useState<'track' | 'version'>('track');
  const [track, setTrack] = useState('stable');
  const [version, setVersion] = useState('2.0');
  const [mode, setMode] = useState<Mode>('client-id');
  const snippet = useMemo(() => {
    const attr = selector === 'track' ? `data-track="${track}"` : `data-version="${version}"`;
    const config = mode === 'client-id'
      ? `  window.svcAIConfig = {\n    svcClientId: '${clientId}',\n    botName: 'Assistant',\n  };`
      : `  window.svcAIConfig = {\n    // your backend returns { "access_token": "…" } (example below)\n    tokenEndpoint: '/api/svc-token',\n    botName: 'Assistant',\n  };`;
    return `<script>\n${config}\n</script>\n<script async src="${origin}/chatbot/loader.js" ${attr}></script>`;
  }, [clientId, selector, track, version, mode, origin]);
  const backend = `// Your backend (Node 18+), e.g. Express: never expose the client secret to the browser.
app.post('/api/svc-token', async (req, res) => {
  const r = await fetch('${origin}/api/widget/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: '${clientId}', client_secret: process.env.SVC_CLIENT_SECRET }),
  });
  res.status(r.status).json(await r.json()); // { access_token, token_type, expires_in }
});`;
  return (
    <section className="panel" aria-labelledby="snippet-heading">
      <h2 id="snippet-heading" style={{ marginTop: 0 }}>Embed snippet</h2>
      <div className="toolbar">
        <div className="field"><label htmlFor="sn-client">Client</label>
          <select id="sn-client" value={clientId} onChange={(e) => setClientId(e.target.value)}>
            {(clients.length ? clients : [clientId]).map((c) => <option key={c} value={c}>{c}</option>)}
          </select></div>
        <div className="field"><label htmlFor="sn-selector">Load by</label>
          <select id="sn-selector" value={selector} onChange={(e) => setSelector(e.target.value as 'track' | 'version')}>
            <option value="track">Release track</option><option value="version">Pinned version</option>
          </select></div>
        {selector === 'track' ? (
          <div className="field"><label htmlFor="sn-track">Track</label>
            <select id="sn-track" value={track} onChange={(e) => setTrack(e.target.value)}>
              <option value="stable">stable (production)</option><option value="beta">beta (staging)</option><option value="lts">lts (enterprise)</option>
            </select></div>
        ) : (
          <div className="field"><label htmlFor="sn-version">Version</label>
            <input id="sn-version" type="text" value={version} onChange={(e) => setVersion(e.target.value)} placeholder="2.0 or 2.0.5" /></div>
        )}
        <div className="field"><label htmlFor="sn-mode">Token mode</label>
          <select id="sn-mode" value={mode} onChange={(e) => setMode(e.target.value as Mode)}>
            <option value="client-id">Client id (widget gets its own tokens)</option><option value="backend">Backend token (your server)</option>
          </select></div>
      </div>
      <pre data-testid="snippet">{snippet}</pre>
      <CopyButton text={snippet} label="Copy snippet" />
      {mode === 'backend' && (<><h3 style={{ fontSize: '1rem' }}>Token endpoint on your backend</h3><pre>{backend}</pre></>)}
    </section>
  );
}
