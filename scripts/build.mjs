// Production build: widget loader + legacy 1.0, Next (app/), and the custom server (server.ts → dist/server.js).
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { sourceFingerprint, writeStamp } from './build-stamp.mjs';

function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

// Fingerprint the sources before building: an edit made during the build triggers the next one.
const fingerprint = sourceFingerprint();

// The widget loader and legacy bundle first: Next serves them from public/.
run(process.execPath, ['scripts/widget.mjs', 'build']);
run(process.execPath, ['node_modules/next/dist/bin/next', 'build']);
await build({
  entryPoints: ['server.ts'],
  outfile: 'dist/server.js',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
// The document worker (lib/documents/pool.ts loads it by path in its own thread).
await build({
  entryPoints: ['lib/documents/extract-worker.ts'],
  outfile: 'dist/extract-worker.mjs',
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
writeStamp(fingerprint);
console.log('built dist/server.js and dist/extract-worker.mjs');
