/** The embed snippets the dashboard generates: admin-typed values cannot break out of the page, and the backend code loads as a module. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { backendSnippet, pageSnippet, TOKEN_PATH } from '../../lib/widget-clients/snippets';

const base = { origin: 'https://svc.example', clientId: 'wc_ABCDEFGHIJKLMNOP', selector: { kind: 'track', track: 'stable' } as const };

describe('pageSnippet', () => {
  it('writes typed values as JSON literals that cannot end the script element', () => {
    const evil = '</script><script>alert(1)</script>';
    const html = pageSnippet({ ...base, mode: 'client-id', botName: evil, welcomeTitle: evil, defaultQuestions: [evil, '  ', 'Why "quotes"?'] });
    assert.equal(html.match(/<\/script>/g)!.length, 2, html);
    const config = html.slice(html.indexOf('window.svcAIConfig = '), html.indexOf('};') + 1).replace('window.svcAIConfig = ', '');
    const parsed = new Function(`return ${config}`)() as { botName: string; defaultQuestions: string[]; advancedWelcomeText: { title: string } };
    assert.equal(parsed.botName, evil);
    assert.equal(parsed.advancedWelcomeText.title, evil);
    assert.deepEqual(parsed.defaultQuestions, [evil, 'Why "quotes"?']);
  });

  it('names exactly one selector, and colours only as #rrggbb', () => {
    const v = pageSnippet({
      ...base,
      selector: { kind: 'version', version: '2.0' },
      mode: 'backend-node',
      colors: { primary: '#c2255c', background: '#ffffff' },
    });
    assert.match(v, /data-version="2\.0"/);
    assert.doesNotMatch(v, /data-track/);
    assert.match(v, /--svc-custom-primary-color: #c2255c; --svc-custom-background-color: #ffffff;/);
    assert.match(v, new RegExp(`tokenEndpoint: "${TOKEN_PATH}"`));
    assert.doesNotMatch(v, /svcClientId/);
    const bad = pageSnippet({ ...base, mode: 'client-id', colors: { primary: 'red;}</style><script>', background: '#fff' } });
    assert.doesNotMatch(bad, /<style>/);
  });
});

describe('backendSnippet', () => {
  for (const mode of ['backend-node', 'backend-fetch'] as const) {
    it(`${mode}: a module that exports the GET handler and keeps the secret in the environment`, async () => {
      const code = backendSnippet({ origin: 'https://svc.example', clientId: base.clientId, mode });
      assert.match(code, /process\.env\.SVC_CLIENT_SECRET/);
      assert.doesNotMatch(code, /app\.post|method: 'GET'/);
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snippet-')), 'svc-token.mjs');
      fs.writeFileSync(file, code);
      const mod = await import(pathToFileURL(file).href);
      assert.equal(typeof (mode === 'backend-node' ? mod.svcToken : mod.GET), 'function');
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    });
  }
});
