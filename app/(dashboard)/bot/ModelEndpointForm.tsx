'use client';
import { type ReactNode, useActionState, useState } from 'react';
import { FormError, FormResult } from '../_components/FormResult';
import { saveModelEndpointAction, testModelEndpointAction } from './model-actions';

export type EndpointView = { baseUrl: string; keySet: boolean; embeddingModel: string };

/** The account's own OpenAI-compatible endpoint (docs/contracts.md §16): the key is never shown, only whether one is set. */
export function ModelEndpointForm({ initial, defaultModel }: { initial: EndpointView; defaultModel: string }) {
  const [saveState, save, saving] = useActionState(saveModelEndpointAction, null);
  const [testState, test, testing] = useActionState(testModelEndpointAction, null);
  // Controlled fields: what was typed stays after a refusal (a form action resets uncontrolled ones).
  const [baseUrl, setBaseUrl] = useState(initial.baseUrl);
  const [apiKey, setApiKey] = useState('');
  const [clearKey, setClearKey] = useState(false);
  const [embeddingModel, setEmbeddingModel] = useState(initial.embeddingModel);
  // Only the message of the button pressed last: a refusal from an earlier save would read as the test's.
  const [last, setLast] = useState<'save' | 'test' | null>(null);
  const current = saveState?.ok ? saveState.saved : initial;
  return (
    <section className="panel" aria-labelledby="model-heading">
      <h2 id="model-heading" style={{ marginTop: 0 }}>
        Your model
      </h2>
      <p className="muted" data-testid="model-status">
        {current.baseUrl
          ? `Connected: answers are written by your model at ${current.baseUrl}${current.embeddingModel ? `, and passages are also found by meaning (${current.embeddingModel})` : ''}.`
          : 'Not connected. Connect any OpenAI-compatible endpoint (OpenAI, Azure OpenAI, a server you run) and the bot writes its answers with your model, from the passages it finds and your instructions.'}
      </p>
      <form action={save}>
        <TextField
          id="model-base-url"
          name="baseUrl"
          label="Base URL"
          value={baseUrl}
          onChange={setBaseUrl}
          maxLength={2000}
          placeholder="https://api.openai.com/v1"
          inputMode="url"
          hint={
            <>
              Usually ends in <code>/v1</code>. Clear it and save to disconnect.
            </>
          }
        />
        <TextField
          id="model-api-key"
          name="apiKey"
          label="API key"
          type="password"
          value={apiKey}
          onChange={setApiKey}
          maxLength={1000}
          placeholder={current.keySet ? 'Type a new key to replace it' : 'Your key, if the endpoint needs one'}
          hint={<span data-testid="key-status">{current.keySet ? 'A key is stored (encrypted). It is never shown again.' : 'No key stored.'}</span>}
        >
          {current.keySet && (
            <label style={{ display: 'block', marginTop: '.25rem' }}>
              <input name="clearKey" type="checkbox" checked={clearKey} onChange={(e) => setClearKey(e.target.checked)} /> Remove the stored key
            </label>
          )}
        </TextField>
        <TextField
          id="model-embedding"
          name="embeddingModel"
          label="Embedding model"
          value={embeddingModel}
          onChange={setEmbeddingModel}
          maxLength={100}
          placeholder="text-embedding-3-small"
          hint={
            <>
              Optional. With it, the bot also finds passages by meaning, not only by shared words. Leave it empty if your endpoint does not serve embeddings.
              The chat model is the Model setting above (empty: {defaultModel}).
            </>
          }
        />
        <div className="row">
          <button className="btn" type="submit" disabled={saving} onClick={() => setLast('save')}>
            {saving ? 'Saving…' : 'Save model'}
          </button>
          <button className="btn secondary" type="submit" formAction={test} disabled={testing} onClick={() => setLast('test')}>
            {testing ? 'Testing…' : 'Test connection'}
          </button>
        </div>
      </form>
      {last === 'save' && (
        <FormResult
          state={saveState}
          saved={saveState?.ok && (saveState.saved.baseUrl ? 'Model saved.' : 'Model disconnected: the built-in engine answers.')}
          style={{ marginTop: '1rem' }}
        />
      )}
      {last === 'test' && <FormError error={testState && !testState.ok ? testState.error : null} style={{ marginTop: '1rem' }} />}
      {last === 'test' && testState?.ok && (
        <div role="status" style={{ marginTop: '1rem' }} data-testid="test-result">
          <p style={{ margin: 0 }} className={testState.works ? 'success' : 'error'}>
            {testState.works ? 'The connection works.' : 'The connection does not work yet.'}
          </p>
          <ul style={{ margin: '.5rem 0 0', paddingLeft: '1.25rem' }}>
            {testState.checks.map((c) => (
              <li key={c.name}>
                <strong>{c.name}</strong>: {c.ok ? 'works' : 'failed'} — {c.detail}
              </li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

/** A controlled text input with its label and a hint it is described by. */
function TextField(p: {
  id: string;
  name: string;
  label: string;
  value: string;
  onChange: (v: string) => void;
  maxLength: number;
  placeholder: string;
  hint: ReactNode;
  type?: 'text' | 'password';
  inputMode?: 'url';
  children?: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={p.id}>{p.label}</label>
      <input
        id={p.id}
        name={p.name}
        type={p.type ?? 'text'}
        inputMode={p.inputMode}
        autoComplete="off"
        maxLength={p.maxLength}
        value={p.value}
        onChange={(e) => p.onChange(e.target.value)}
        placeholder={p.placeholder}
        aria-describedby={`${p.id}-hint`}
      />
      <p id={`${p.id}-hint`} className="muted" style={{ margin: '.25rem 0 0' }}>
        {p.hint}
      </p>
      {p.children}
    </div>
  );
}
