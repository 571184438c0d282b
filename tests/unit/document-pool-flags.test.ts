/**
 * An operator's Node flags (`node --max-old-space-size=… --expose-gc dist/server.js`) must not stop
 * the document threads: Node refuses such flags in a worker, and the pool used to inherit them
 * (the server then failed at start with ERR_WORKER_INVALID_EXEC_ARGV).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { it } from 'node:test';

it('documents are read in worker threads when the server runs with V8 and process flags', { timeout: 60_000 }, () => {
  const code = `
    const m = await import('./lib/documents/pool.ts');
    const { extractInWorker, closeDocumentPool } = m.extractInWorker ? m : m.default;
    const text = await extractInWorker(new TextEncoder().encode('<h1>Returns</h1><p>Thirty days.</p>'), 'text/html');
    await closeDocumentPool();
    process.stdout.write(JSON.stringify({ text }));`;
  const r = spawnSync(process.execPath, ['--max-old-space-size=300', '--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code], {
    encoding: 'utf8',
    env: { ...process.env, DOCUMENT_WORKERS: '1' },
  });
  assert.equal(r.status, 0, r.stderr);
  const { text } = JSON.parse(r.stdout) as { text: string };
  assert.match(text, /Returns/);
  assert.match(text, /Thirty days\./);
});
