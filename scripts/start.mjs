// `npm start`: build when there is no build or the sources changed since it, then run the production server in this process.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { rebuildReason } from './build-stamp.mjs';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
// A fresh clone has no build; after a `git pull` or an edit the build is stale: build first.
const reason = rebuildReason(root);
if (reason) {
  console.log(`Building (${reason}; about a minute)...`);
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
process.env.NODE_ENV = 'production';
process.env.NEXT_TELEMETRY_DISABLED = '1';
createRequire(import.meta.url)(path.join(root, 'dist/server.js'));
