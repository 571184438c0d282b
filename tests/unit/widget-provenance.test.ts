/**
 * CONTRIBUTING.md (style): every released widget bundle records its source commit and toolchain, and rebuilding
 * it from that commit gives the committed bytes (`node scripts/widget.mjs verify`).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { it } from 'node:test';

const shallow = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--is-shallow-repository'], { encoding: 'utf8' }).trim() === 'true';
  } catch {
    return true;
  }
})();

it('every release records a source commit and the toolchain', () => {
  const { releases } = JSON.parse(fs.readFileSync('lib/widget/releases.json', 'utf8')) as {
    releases: Array<{ version: string; source_commit?: string; toolchain?: { esbuild?: string } }>;
  };
  assert.ok(releases.length > 0);
  for (const r of releases) {
    assert.match(r.source_commit ?? '', /^[0-9a-f]{40}$/, `${r.version} has no source_commit`);
    assert.ok(r.toolchain?.esbuild, `${r.version} has no toolchain.esbuild`);
  }
});

it('every released bundle rebuilds byte for byte from its source commit', {
  skip: shallow && 'a shallow clone has no history to rebuild from',
  timeout: 120_000,
}, () => {
  const r = spawnSync(process.execPath, ['scripts/widget.mjs', 'verify'], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /^ok {3}2\.0\.3: rebuilt from [0-9a-f]{12} with esbuild [\d.]+: identical$/m);
  assert.doesNotMatch(r.stdout, /FAIL/);
});
