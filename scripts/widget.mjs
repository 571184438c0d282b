// Widget builds and releases.
//   node scripts/widget.mjs build            loader.js and legacy 1.0 from lib/widget (part of npm run build)
//   node scripts/widget.mjs release 2.0.3    a new IMMUTABLE 2.0 bundle in public/chatbot/v/2.0.3/ + releases.json
//   node scripts/widget.mjs default stable 2.1.1  the track's default in releases.json (what a deployment
//                                            serves until an operator runs `widget track set`)
//   node scripts/widget.mjs verify [X.Y.Z]   rebuilds released bundles from their recorded source commit
//                                            and proves the bytes match (CONTRIBUTING.md (style): provenance)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';

const RELEASES = 'lib/widget/releases.json';
const common = { bundle: true, format: 'iife', platform: 'browser', target: ['es2020'], minify: true, legalComments: 'none', logLevel: 'warning' };

async function buildTo(entry, outfile, define = {}) {
  await build({ ...common, entryPoints: [entry], outfile, define });
}

const git = (...args) => execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const esbuildVersion = JSON.parse(readFileSync('node_modules/esbuild/package.json', 'utf8')).version;
const sha384 = (bytes) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
/** What a release is built from: its sources are lib/ (v2.ts and what it imports) at one commit. */
const SOURCE_PATHS = ['lib', 'tsconfig.json', 'package.json'];

/** Rebuilds `release` from the tree of its source commit; returns { ok, detail }. */
async function verifyRelease(release) {
  if (!release.source_commit) return { ok: false, detail: 'no source_commit recorded' };
  if (release.toolchain?.esbuild && release.toolchain.esbuild !== esbuildVersion) {
    return { ok: false, detail: `built with esbuild ${release.toolchain.esbuild}, installed ${esbuildVersion}` };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), `svc-widget-${release.version}-`));
  try {
    const tar = execFileSync('git', ['archive', '--format=tar', release.source_commit, ...SOURCE_PATHS], { maxBuffer: 256 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
    symlinkSync(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');
    const out = await build({
      ...common,
      entryPoints: [path.join(dir, 'lib/widget/v2.ts')],
      write: false,
      absWorkingDir: dir,
      define: { __WIDGET_VERSION__: JSON.stringify(release.version) },
    });
    const rebuilt = out.outputFiles[0].contents;
    const committed = readFileSync(`public${release.url}`);
    if (Buffer.compare(Buffer.from(rebuilt), committed) !== 0)
      return { ok: false, detail: `rebuilt ${rebuilt.length} bytes differ from the committed ${committed.length}` };
    if (sha384(committed) !== release.integrity) return { ok: false, detail: 'the committed bundle does not match its integrity hash' };
    return { ok: true, detail: `rebuilt from ${release.source_commit.slice(0, 12)} with esbuild ${esbuildVersion}: identical` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [cmd, version, trackVersion] = process.argv.slice(2);
if (cmd === 'build') {
  await buildTo('lib/widget/loader.ts', 'public/chatbot/loader.js');
  await buildTo('lib/widget/v1.ts', 'public/chat/v0/widget.js');
  console.log('built public/chatbot/loader.js and public/chat/v0/widget.js');
} else if (cmd === 'release') {
  if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) {
    console.error('usage: node scripts/widget.mjs release X.Y.Z');
    process.exit(2);
  }
  const dir = `public/chatbot/v/${version}`;
  if (existsSync(`${dir}/widget.js`)) {
    console.error(`${version} is already released; released bundles are immutable — choose a new version`);
    process.exit(1);
  }
  // The bundle is built from committed sources only, so its source commit can rebuild it.
  const dirty = git('status', '--porcelain', '--', ...SOURCE_PATHS.filter((p) => p !== 'lib'), 'lib');
  if (dirty.split('\n').some((l) => l && !l.endsWith('lib/widget/releases.json'))) {
    console.error(`commit the sources first (a release records its source commit):\n${dirty}`);
    process.exit(1);
  }
  const sourceCommit = git('rev-parse', 'HEAD');
  mkdirSync(dir, { recursive: true });
  await buildTo('lib/widget/v2.ts', `${dir}/widget.js`, { __WIDGET_VERSION__: JSON.stringify(version) });
  const integrity = sha384(readFileSync(`${dir}/widget.js`));
  const releases = existsSync(RELEASES) ? JSON.parse(readFileSync(RELEASES, 'utf8')) : { releases: [], tracks: {} };
  const minServer = JSON.parse(readFileSync('package.json', 'utf8')).version;
  releases.releases.push({
    version,
    url: `/chatbot/v/${version}/widget.js`,
    integrity,
    min_server_version: minServer,
    released_at: new Date().toISOString().slice(0, 10),
    source_commit: sourceCommit,
    toolchain: { esbuild: esbuildVersion },
  });
  writeFileSync(RELEASES, `${JSON.stringify(releases, null, 2)}\n`);
  console.log(JSON.stringify({ version, integrity }));
} else if (cmd === 'default') {
  const releases = JSON.parse(readFileSync(RELEASES, 'utf8'));
  const track = version;
  if (!['stable', 'beta', 'lts'].includes(track) || !releases.releases.some((r) => r.version === trackVersion)) {
    console.error('usage: node scripts/widget.mjs default stable|beta|lts X.Y.Z (a released version)');
    process.exit(2);
  }
  const previous = releases.tracks[track];
  releases.tracks[track] = trackVersion;
  writeFileSync(RELEASES, `${JSON.stringify(releases, null, 2)}\n`);
  console.log(JSON.stringify({ track, version: trackVersion, previous }));
} else if (cmd === 'verify') {
  const { releases } = JSON.parse(readFileSync(RELEASES, 'utf8'));
  const chosen = version ? releases.filter((r) => r.version === version) : releases;
  if (chosen.length === 0) {
    console.error(`no release ${version}`);
    process.exit(2);
  }
  let failed = 0;
  for (const r of chosen) {
    const { ok, detail } = await verifyRelease(r);
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${r.version}: ${detail}`);
    if (!ok) failed++;
  }
  process.exit(failed ? 1 : 0);
} else {
  console.error('usage: node scripts/widget.mjs build | release X.Y.Z | default TRACK X.Y.Z | verify [X.Y.Z]');
  process.exit(2);
}
