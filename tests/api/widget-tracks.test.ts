// One database: PostgreSQL — the widget's files and tracks are served from the build
/** Widget track pointers live in the database (docs/contracts.md §9): CLI set/rollback, the old pointer file migrated without loss. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { rows } from '../../db/client';
import { moveTrackPointer } from '../../db/queries/widget-tracks';
import { inDb, parseSuccess, runCli, useCliDatabase } from '../helpers/cli';

const cliDb = useCliDatabase();
// The pointer file lives in DATA_DIR; under PostgreSQL the CLI gets a DATA_DIR of its own too.
const dataDir = cliDb.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tracks-'));
const cli = (args: string[]) => runCli(['widget', 'track', ...args], { DATA_DIR: dataDir });
const releases = JSON.parse(fs.readFileSync('lib/widget/releases.json', 'utf8')) as { tracks: Record<string, string>; releases: Array<{ version: string }> };
const versions = releases.releases.map((r) => r.version);
const other = (v: string) => versions.find((x) => x !== v)!;

// Track pointers are deployment-wide: start and end with none stored.
const clear = () => inDb((db) => db.execute(sql`DELETE FROM widget_tracks`));
before(clear);
after(async () => {
  await clear();
  await cliDb.cleanup();
  if (!cliDb.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

const stored = async () =>
  [
    ...(await inDb((db) =>
      rows<{ track: string; version: string; history: string[] }>(db, sql`SELECT track, version, history FROM widget_tracks ORDER BY track`),
    )),
  ].map((r) => ({ ...r }));

describe('widget track commands', () => {
  it('set stores the pointer with its history, rollback walks it back, and a third rollback is refused', async () => {
    const base = releases.tracks.beta!;
    const next = other(base);
    assert.deepEqual(parseSuccess(await cli(['set', '--track', 'beta', '--version', next])), { track: 'beta', version: next, previous: base });
    assert.deepEqual(parseSuccess(await cli(['set', '--track', 'beta', '--version', base])), { track: 'beta', version: base, previous: next });
    assert.deepEqual(await stored(), [{ track: 'beta', version: base, history: [base, next] }]);
    assert.deepEqual(parseSuccess(await cli(['rollback', '--track', 'beta'])), { track: 'beta', version: next, rolled_back_from: base });
    assert.deepEqual(parseSuccess(await cli(['rollback', '--track', 'beta'])), { track: 'beta', version: base, rolled_back_from: next });
    const refused = await cli(['rollback', '--track', 'beta']);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^error: Track beta has no earlier version to roll back to\.\n$/);
    assert.deepEqual(await stored(), [{ track: 'beta', version: base, history: [] }]);
  });

  it('refuses an unknown track or version without writing anything', async () => {
    const before = await stored();
    const cases: Array<[string[], RegExp]> = [
      [['set', '--track', 'nightly', '--version', versions[0]!], /track must be one of stable, beta, lts/],
      [['set', '--track', 'stable', '--version', '9.9.9'], /No released widget version 9\.9\.9/],
      [['rollback', '--track', 'lts'], /Track lts has no earlier version/],
      [['set', '--track', 'stable'], /missing --version/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    }
    assert.deepEqual(await stored(), before);
  });

  it('migrates an existing DATA_DIR/widget-tracks.json into the database with its history, once', async () => {
    await clear();
    const file = path.join(dataDir, 'widget-tracks.json');
    const [a, b] = [versions[0]!, other(versions[0]!)];
    fs.writeFileSync(
      file,
      JSON.stringify({ tracks: { stable: { version: b, history: [a, b, a] }, lts: { version: a, history: [] }, nightly: { version: a, history: [] } } }),
    );
    // The first command of any kind migrates the file: rollback sees the file's history.
    assert.deepEqual(parseSuccess(await cli(['rollback', '--track', 'stable'])), { track: 'stable', version: a, rolled_back_from: b });
    assert.ok(!fs.existsSync(file), 'the file is not read again');
    assert.ok(fs.existsSync(`${file}.migrated`), 'the file is kept renamed');
    assert.deepEqual(await stored(), [
      { track: 'lts', version: a, history: [] },
      { track: 'stable', version: a, history: [a, b] },
    ]);
    // A stale copy of the file appearing later never overrides what the database says.
    fs.copyFileSync(`${file}.migrated`, file);
    assert.deepEqual(parseSuccess(await cli(['rollback', '--track', 'stable'])), { track: 'stable', version: b, rolled_back_from: a });
    assert.deepEqual(
      (await stored()).find((r) => r.track === 'stable'),
      { track: 'stable', version: b, history: [a] },
    );
  });

  it('a broken pointer file stops the command with a clear message and is left in place', async () => {
    const file = path.join(dataDir, 'widget-tracks.json');
    fs.writeFileSync(file, '{"tracks": {"stable": {"version": 3}}}');
    const r = await cli(['set', '--track', 'stable', '--version', versions[0]!]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /widget-tracks\.json is not a widget track pointer file/);
    assert.ok(fs.existsSync(file));
    fs.rmSync(file);
  });

  it('keeps the last 20 versions of history', async () => {
    await clear();
    const [a, b] = [versions[0]!, other(versions[0]!)];
    await inDb(async (db) => {
      for (let i = 0; i < 25; i++) await moveTrackPointer(db, 'lts', i % 2 === 0 ? b : a, a);
    });
    const [row] = (await stored()).filter((r) => r.track === 'lts');
    assert.equal(row!.history.length, 20);
    assert.equal(row!.version, b);
    assert.equal(row!.history.at(-1), a, 'the newest previous version is last');
  });
});
