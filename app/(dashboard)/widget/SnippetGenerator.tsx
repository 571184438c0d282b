'use client';
import { useMemo, useState } from 'react';
import { backendSnippet, pageSnippet, TOKEN_PATH, type TokenMode } from '@/lib/widget-clients/snippets';
import { featuresOf, WIDGET_FEATURES } from '@/lib/widget-releases/features';
import { CopyButton } from '../_components/CopyButton';

export type ClientOption = { id: string; name: string };

// Wrap code at spaces; break a long token only when it cannot fit.
const CODE = { wordBreak: 'normal', overflowWrap: 'anywhere' } as const;

/** The embed snippet for a chosen client, track or version, token mode and the 2.0 options. */
export function SnippetGenerator({
  origin,
  clients,
  versions,
  tracks,
  clientId,
  onClientChange,
}: {
  origin: string;
  clients: ClientOption[];
  versions: string[];
  tracks: Record<string, string>;
  clientId: string;
  onClientChange: (id: string) => void;
}) {
  const [selector, setSelector] = useState<'track' | 'version'>('track');
  const [track, setTrack] = useState('stable');
  const [version, setVersion] = useState(versions[0] ?? '2.0');
  const [mode, setMode] = useState<TokenMode>('client-id');
  const [botName, setBotName] = useState('Assistant');
  const [headerChatName, setHeaderChatName] = useState('');
  const [welcomeTitle, setWelcomeTitle] = useState('');
  const [welcomeDescription, setWelcomeDescription] = useState('');
  const [questions, setQuestions] = useState('');
  const [upload, setUpload] = useState(false);
  const [themed, setThemed] = useState(false);
  const [primary, setPrimary] = useState('#3b5bdb');
  const [background, setBackground] = useState('#ffffff');
  const id = clientId || 'wc_YOUR_CLIENT_ID';
  const html = useMemo(
    () =>
      pageSnippet({
        origin,
        clientId: id,
        mode,
        selector: selector === 'track' ? { kind: 'track', track } : { kind: 'version', version },
        botName,
        headerChatName,
        welcomeTitle,
        welcomeDescription,
        defaultQuestions: questions.split('\n'),
        enableFileUpload: upload,
        colors: themed ? { primary, background } : null,
      }),
    [origin, id, mode, selector, track, version, botName, headerChatName, welcomeTitle, welcomeDescription, questions, upload, themed, primary, background],
  );
  const exact = versions.find((v) => (selector === 'track' ? v === tracks[track] : v === version || v.startsWith(`${version}.`)));
  const backend = mode === 'client-id' ? '' : backendSnippet({ origin, clientId: id, mode });
  return (
    <section className="panel" aria-labelledby="snippet-heading">
      <h2 id="snippet-heading" style={{ marginTop: 0 }}>
        Embed snippet
      </h2>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="sn-client">Client</label>
          <select id="sn-client" value={id} onChange={(e) => onClientChange(e.target.value)}>
            {clients.length === 0 && <option value={id}>{id}</option>}
            {clients.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name} ({c.id})
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="sn-selector">Load by</label>
          <select id="sn-selector" value={selector} onChange={(e) => setSelector(e.target.value as 'track' | 'version')}>
            <option value="track">Release track</option>
            <option value="version">Pinned version</option>
          </select>
        </div>
        {selector === 'track' ? (
          <div className="field">
            <label htmlFor="sn-track">Track</label>
            <select id="sn-track" value={track} onChange={(e) => setTrack(e.target.value)}>
              <option value="stable">stable {tracks.stable} (production)</option>
              <option value="beta">beta {tracks.beta} (staging)</option>
              <option value="lts">lts {tracks.lts} (enterprise)</option>
            </select>
          </div>
        ) : (
          <div className="field">
            <label htmlFor="sn-version">Version</label>
            <select id="sn-version" value={version} onChange={(e) => setVersion(e.target.value)}>
              {versions.map((v) => (
                <option key={v} value={v}>
                  {v.split('.').length === 2 ? `${v} (newest ${v}.x)` : v}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor="sn-mode">Token mode</label>
          <select id="sn-mode" value={mode} onChange={(e) => setMode(e.target.value as TokenMode)}>
            <option value="client-id">Client id (widget gets its own tokens)</option>
            <option value="backend-node">Backend token: Node.js (Express, node:http)</option>
            <option value="backend-fetch">Backend token: Fetch API (Next.js route, Hono, Bun)</option>
          </select>
        </div>
      </div>
      <details style={{ marginBottom: '.75rem' }}>
        <summary style={{ cursor: 'pointer', fontWeight: 600 }}>Options: name, welcome text, questions, colours</summary>
        <div className="row" style={{ marginTop: '.75rem' }}>
          <div className="field">
            <label htmlFor="sn-bot">Bot name</label>
            <input id="sn-bot" type="text" maxLength={60} value={botName} onChange={(e) => setBotName(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="sn-header">Header title</label>
            <input
              id="sn-header"
              type="text"
              maxLength={60}
              value={headerChatName}
              placeholder="the bot name"
              onChange={(e) => setHeaderChatName(e.target.value)}
            />
          </div>
        </div>
        <div className="row" style={{ marginTop: '.75rem' }}>
          <div className="field">
            <label htmlFor="sn-wtitle">Welcome title</label>
            <input id="sn-wtitle" type="text" maxLength={80} value={welcomeTitle} onChange={(e) => setWelcomeTitle(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="sn-wdesc">Welcome text</label>
            <input id="sn-wdesc" type="text" maxLength={300} value={welcomeDescription} onChange={(e) => setWelcomeDescription(e.target.value)} />
          </div>
        </div>
        <div className="field" style={{ marginTop: '.75rem' }}>
          <label htmlFor="sn-questions">Suggested questions (one per line)</label>
          <textarea id="sn-questions" rows={3} value={questions} onChange={(e) => setQuestions(e.target.value)} />
        </div>
        <div className="row">
          <label style={{ display: 'flex', gap: '.4rem', alignItems: 'center', fontWeight: 400 }}>
            <input type="checkbox" checked={upload} onChange={(e) => setUpload(e.target.checked)} /> Visitors may attach files
          </label>
          <label style={{ display: 'flex', gap: '.4rem', alignItems: 'center', fontWeight: 400 }}>
            <input type="checkbox" checked={themed} onChange={(e) => setThemed(e.target.checked)} /> Own colours
          </label>
          {themed && (
            <>
              <label style={{ display: 'flex', gap: '.4rem', alignItems: 'center', fontWeight: 400 }}>
                <input type="color" value={primary} onChange={(e) => setPrimary(e.target.value)} /> Primary colour
              </label>
              <label style={{ display: 'flex', gap: '.4rem', alignItems: 'center', fontWeight: 400 }}>
                <input type="color" value={background} onChange={(e) => setBackground(e.target.value)} /> Background colour
              </label>
            </>
          )}
        </div>
      </details>
      <details style={{ marginBottom: '.75rem' }}>
        <summary style={{ cursor: 'pointer', fontWeight: 600 }}>What each track&apos;s widget has</summary>
        <TrackFeatures tracks={tracks} />
      </details>
      <h3 style={{ fontSize: '1rem' }}>On every page of your site</h3>
      {exact && <SnippetFeatures version={exact} />}
      <pre data-testid="snippet" style={CODE}>
        {html}
      </pre>
      <CopyButton text={html} label="Copy snippet" />
      {mode !== 'client-id' && (
        <>
          <h3 style={{ fontSize: '1rem' }}>
            Token endpoint on your backend (<code>GET {TOKEN_PATH}</code>)
          </h3>
          <p className="muted">
            Set <code>SVC_CLIENT_SECRET</code> to this client&apos;s secret (shown when the client was created or its secret rotated).
          </p>
          <pre data-testid="backend-snippet" style={CODE}>
            {backend}
          </pre>
          <CopyButton text={backend} label="Copy backend code" />
        </>
      )}
    </section>
  );
}

/** Which of the preview's features the chosen snippet's widget has, so the preview promises nothing the site lacks. */
function SnippetFeatures({ version }: { version: string }) {
  const { lacks } = featuresOf(version);
  if (lacks.length === 0) {
    return (
      <p className="muted" data-testid="snippet-features">
        Widget {version}: everything the preview below shows.
      </p>
    );
  }
  return (
    <p className="notice" role="note" data-testid="snippet-features">
      Widget {version} lacks what the preview below shows: {lacks.map((f) => f.label).join(', ')}. Sites on this snippet will not have them; choose a track or
      version of 2.1 or later.
    </p>
  );
}

/** The table of features per track: which version each track serves now and what it can do. */
export function TrackFeatures({ tracks }: { tracks: Record<string, string> }) {
  return (
    <div className="table-scroll">
      <table className="simple" aria-label="Features of each release">
        <thead>
          <tr>
            <th scope="col">Feature</th>
            {Object.keys(tracks).map((t) => (
              <th scope="col" key={t}>
                {t} ({tracks[t]})
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {WIDGET_FEATURES.map((f) => (
            <tr key={f.key}>
              <th scope="row">{f.label}</th>
              {Object.entries(tracks).map(([t, v]) => (
                <td key={t}>{featuresOf(v).has.includes(f) ? 'yes' : 'no'}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
