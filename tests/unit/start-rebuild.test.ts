/**
 * `npm start` rebuilds when the sources changed since the build (scripts/start.mjs with the stamp
 * scripts/build.mjs writes). The real start.mjs and build-stamp.mjs run in a scratch tree whose
 * scripts/build.mjs is a stand-in that stamps like the real one and counts its runs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-start-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const FAKE_BUILD = `
import fs from 'node:fs';
import { sourceFingerprint, writeStamp } from './build-stamp.mjs';
const fp = sourceFingerprint();
fs.mkdirSync('.next', { recursive: true }); fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync('.next/BUILD_ID', 'x');
fs.writeFileSync('dist/server.js', "console.log('serving ' + require('fs').readFileSync('app/page.tsx', 'utf8'))");
fs.appendFileSync('builds.log', 'build\\n');
writeStamp(fp);
`;

function start() {
  const r = spawnSync(process.execPath, [path.join(root, 'scripts/start.mjs')], { cwd: os.tmpdir(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const builds = fs.existsSync(path.join(root, 'builds.log')) ? fs.readFileSync(path.join(root, 'builds.log'), 'utf8').split('\n').filter(Boolean).length : 0;
  return { out: r.stdout, builds };
}

test('builds on a fresh clone, not again while the sources match, and again after they change', () => {
  fs.mkdirSync(path.join(root, 'scripts'));
  fs.mkdirSync(path.join(root, 'app'));
  fs.mkdirSync(path.join(root, 'lib/widget'), { recursive: true });
  fs.copyFileSync('scripts/start.mjs', path.join(root, 'scripts/start.mjs'));
  fs.copyFileSync('scripts/build-stamp.mjs', path.join(root, 'scripts/build-stamp.mjs'));
  fs.writeFileSync(path.join(root, 'scripts/build.mjs'), FAKE_BUILD);
  fs.writeFileSync(path.join(root, 'app/page.tsx'), 'v1');
  fs.writeFileSync(path.join(root, 'lib/widget/loader.ts'), 'w1');
  fs.writeFileSync(path.join(root, 'package.json'), '{"name":"scratch"}');

  let r = start();
  assert.match(r.out, /Building \(no production build yet/);
  assert.match(r.out, /serving v1/);
  assert.equal(r.builds, 1);

  r = start();
  assert.doesNotMatch(r.out, /Building/);
  assert.equal(r.builds, 1);

  // a `git pull` that changes a page
  fs.writeFileSync(path.join(root, 'app/page.tsx'), 'v2');
  r = start();
  assert.match(r.out, /Building \(the sources changed since the last build/);
  assert.match(r.out, /serving v2/);
  assert.equal(r.builds, 2);

  // a new file, a widget source, a root config file: each is a change
  for (const [file, body] of [
    ['app/new.tsx', 'n'],
    ['lib/widget/loader.ts', 'w2'],
    ['next.config.mjs', 'export default {}'],
  ] as const) {
    fs.writeFileSync(path.join(root, file), body);
    const count: number = r.builds;
    r = start();
    assert.equal(r.builds, count + 1, file);
  }
  // build outputs and data are not sources
  fs.mkdirSync(path.join(root, '.data'));
  fs.writeFileSync(path.join(root, '.data/x'), 'data');
  fs.writeFileSync(path.join(root, 'next-env.d.ts'), 'generated');
  const before = r.builds;
  r = start();
  assert.equal(r.builds, before);

  // a build from before stamps existed is rebuilt once
  fs.rmSync(path.join(root, '.next/svc-build-stamp.json'));
  r = start();
  assert.match(r.out, /Building \(the build has no source stamp/);
  assert.equal(r.builds, before + 1);
});
