import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, it } from 'node:test';
import { featuresOf } from '../../lib/widget-releases/features';

// Reads what `npm run build` produced (npm test builds first) and the committed releases.
const releases = JSON.parse(fs.readFileSync('lib/widget/releases.json', 'utf8')) as {
  releases: Array<{ version: string; url: string; integrity: string }>;
  tracks: Record<string, string>;
};
const gz = (file: string) => gzipSync(fs.readFileSync(file), { level: 9 }).length;

describe('widget releases and size budgets', () => {
  it('every track points at a released version', () => {
    for (const track of ['stable', 'beta', 'lts']) {
      assert.ok(
        releases.releases.some((r) => r.version === releases.tracks[track]),
        `${track} → ${releases.tracks[track]}`,
      );
    }
  });

  it('stable serves the newest 2.1.x by default, with the desk (handoff, rating, comments, appearance); lts stays on 2.0.x', () => {
    const newest21 = releases.releases
      .map((r) => r.version)
      .filter((v) => v.startsWith('2.1.'))
      .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }))[0];
    assert.equal(releases.tracks.stable, newest21);
    assert.deepEqual(featuresOf(releases.tracks.stable!).lacks, []);
    assert.match(releases.tracks.lts!, /^2\.0\./);
    assert.deepEqual(
      featuresOf('2.0.4').lacks.map((f) => f.key),
      ['handoff', 'rating', 'comments', 'appearance', 'history', 'handoff_text'],
    );
    assert.deepEqual(
      featuresOf('2.1.0').lacks.map((f) => f.key),
      ['handoff_text'],
    );
    // Every feature the table names is in the bundle of the version it is said to arrive with.
    const bundle = (v: string) => fs.readFileSync(`public/chatbot/v/${v}/widget.js`, 'utf8');
    for (const [v, words] of [
      ['2.1.0', ['Talk to a person', 'Add a comment']],
      ['2.1.1', ['handoffButtonText']],
    ] as const) {
      for (const w of words) assert.ok(bundle(v).includes(w), `${v} has ${w}`);
      for (const w of words) assert.ok(!bundle('2.0.4').includes(w), `2.0.4 lacks ${w}`);
    }
  });

  it('released bundles are unchanged (their SRI hash still matches) and within 30 KB gzipped', () => {
    for (const r of releases.releases) {
      const file = `public${r.url}`;
      const digest = `sha384-${createHash('sha384').update(fs.readFileSync(file)).digest('base64')}`;
      assert.equal(digest, r.integrity, `${r.version} was modified after release`);
      const size = gz(file);
      assert.ok(size <= 30 * 1024, `${r.version}: ${size} bytes gzipped > 30 KB`);
    }
  });

  it("the next release, built from today's sources (the shared Markdown parser included), stays within 30 KB gzipped", async () => {
    const out = await build({
      bundle: true,
      format: 'iife',
      platform: 'browser',
      target: ['es2020'],
      minify: true,
      legalComments: 'none',
      write: false,
      entryPoints: ['lib/widget/v2.ts'],
      define: { __WIDGET_VERSION__: '"0.0.0"' },
    });
    const size = gzipSync(out.outputFiles[0]!.contents, { level: 9 }).length;
    assert.ok(size <= 30 * 1024, `lib/widget/v2.ts: ${size} bytes gzipped > 30 KB`);
  });

  it('the loader is at most 3 KB gzipped and the legacy bundle exists', () => {
    const size = gz('public/chatbot/loader.js');
    assert.ok(size <= 3 * 1024, `loader: ${size} bytes gzipped`);
    assert.ok(fs.statSync('public/chat/v0/widget.js').size > 1000);
  });
});
