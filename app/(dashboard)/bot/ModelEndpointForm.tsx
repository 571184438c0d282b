'use client';
import { useActionState, useState } from 'react';
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
        <div className="field">
          <label htmlFor="model-base-url">Base URL</label>
          <input
            id="model-base-url"
            name="baseUrl"
            type="text"
            inputMode="url"
            autoComplete="off"
            maxLength={2000}
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.target.value)}
            placeholder="https://api.openai.com/v1"
            aria-describedby="model-base-url-hint"
          />
          <p id="model-base-url-hint" className="muted" style={{ margin: '.25rem 0 0' }}>
            Usually ends in <code>/v1</code>. Clear it and save to disconnect.
          </p>
        </div>
        <div className="field">
          <label htmlFor="model-api-key">API key</label>
          <input
            id="model-api-key"
            name="apiKey"
            type="password"
            autoComplete="off"
            maxLength={1000}
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            placeholder={current.keySet ? 'Type a new key to replace it' : 'Your key, if the endpoint needs one'}
            aria-describedby="model-api-key-hint"
          />
          <p id="model-api-key-hint" className="muted" style={{ margin: '.25rem 0 0' }} data-testid="key-status">
            {current.keySet ? 'A key is stored (encrypted). It is never shown again.' : 'No key stored.'}
          </p>
          {current.keySet && (
            <label style={{ display: 'block', marginTop: '.25rem' }}>
              <input name="clearKey" type="checkbox" checked={clearKey} onChange={(e) => setClearKey(e.target.checked)} /> Remove the stored key
            </label>
          )}
        </div>
        <div className="field">
          <label htmlFor="model-embedding">Embedding model</label>
          <input
            id="model-embedding"
            name="embeddingModel"
            type="text"
            autoComplete="off"
            maxLength={100}
            value={embeddingModel}
            onChange={(e) => setEmbeddingModel(e.target.value)}
            placeholder="text-embedding-3-small"
            aria-describedby="model-embedding-hint"
          />
          <p id="model-embedding-hint" className="muted" style={{ margin: '.25rem 0 0' }}>
            Optional. With it, the bot also finds passages by meaning, not only by shared words. Leave it empty if your endpoint does not serve embeddings. The
            chat model is the Model setting above (empty: {defaultModel}).
          </p>
        </div>
        <div className="row">
          <button className="btn" type="submit" disabled={saving} onClick={() => setLast('save')}>
            {saving ? 'Saving…' : 'Save model'}
          </button>
          <button className="btn secondary" type="submit" formAction={test} disabled={testing} onClick={() => setLast('test')}>
            {testing ? 'Testing…' : 'Test connection'}
          </button>
        </div>
      </form>
      {last === 'save' && saveState && !saveState.ok && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {saveState.error}
        </p>
      )}
      {last === 'save' && saveState?.ok && (
        <p className="success" role="status" style={{ marginTop: '1rem' }}>
          {saveState.saved.baseUrl ? 'Model saved.' : 'Model disconnected: the built-in engine answers.'}
        </p>
      )}
      {last === 'test' && testState && !testState.ok && (
        <p className="error" role="alert" style={{ marginTop: '1rem' }}>
          {testState.error}
        </p>
      )}
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
