// Widget builds and releases.
//   node scripts/widget.mjs build            loader.js and legacy 1.0 from lib/widget (part of npm run build)
//   node scripts/widget.mjs release 2.0.3    a new IMMUTABLE 2.0 bundle in public/chatbot/v/2.0.3/ + releases.json
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const RELEASES = 'lib/widget/releases.json';
const common = { bundle: true, format: 'iife', platform: 'browser', target: ['es2020'], minify: true, legalComments: 'none', logLevel: 'warning' };

async function buildTo(entry, outfile, define = {}) {
  await build({ ...common, entryPoints: [entry], outfile, define });
}

const [cmd, version] = process.argv.slice(2);
if (cmd === 'build') {
  await buildTo('lib/widget/loader.ts', 'public/chatbot/loader.js');
  await buildTo('lib/widget/v1.ts', 'public/chat/v0/widget.js');
  console.log('built public/chatbot/loader.js and public/chat/v0/widget.js');
} else if (cmd === 'release') {
  if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) { console.error('usage: node scripts/widget.mjs release X.Y.Z'); process.exit(2); }
  const dir = `public/chatbot/v/${version}`;
  if (existsSync(`${dir}/widget.js`)) { console.error(`${version} is already released; released bundles are immutable — choose a new version`); process.exit(1); }
  mkdirSync(dir, { recursive: true });
  await buildTo('lib/widget/v2.ts', `${dir}/widget.js`, { __WIDGET_VERSION__: JSON.stringify(version) });
  const integrity = `sha384-${createHash('sha384').update(readFileSync(`${dir}/widget.js`)).digest('base64')}`;
  const releases = existsSync(RELEASES) ? JSON.parse(readFileSync(RELEASES, 'utf8')) : { releases: [], tracks: {} };
  const minServer = JSON.parse(readFileSync('package.json', 'utf8')).version;
  releases.releases.push({ version, url: `/chatbot/v/${version}/widget.js`, integrity, min_server_version: minServer, released_at: new Date().toISOString().slice(0, 10) });
  writeFileSync(RELEASES, `${JSON.stringify(releases, null, 2)}\n`);
  console.log(JSON.stringify({ version, integrity }));
} else {
  console.error('usage: node scripts/widget.mjs build | release X.Y.Z');
  process.exit(2);
}
