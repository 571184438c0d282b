// `npm start`: build once on a fresh clone, then run the production server in this process.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
if (!existsSync('.next/BUILD_ID') || !existsSync('dist/server.js')) {
  console.log('No production build yet: building (once, about a minute)...');
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
process.env.NODE_ENV = 'production';
process.env.NEXT_TELEMETRY_DISABLED = '1';
createRequire(import.meta.url)(path.join(root, 'dist/server.js'));
