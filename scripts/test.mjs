// `npm test`: production build, unit tests, API tests on PGlite AND PostgreSQL, browser tests.
// PostgreSQL: a fresh database per run on TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';

const results = [];
function step(name, cmd, args, env = {}) {
  console.log(`\n=== ${name} ===`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 28 });
  process.stdout.write(r.stdout ?? '');
  const out = r.stdout ?? '';
  const pass = Number(/^ℹ pass (\d+)/m.exec(out)?.[1] ?? /^\s+(\d+) passed/m.exec(out)?.[1] ?? 0);
  const fail = Number(/^ℹ fail (\d+)/m.exec(out)?.[1] ?? /^\s+(\d+) failed/m.exec(out)?.[1] ?? 0);
  results.push({ name, ok: r.status === 0, pass, fail: r.status === 0 ? fail : Math.max(fail, 1), seconds: (Date.now() - started) / 1000 });
  return r.status === 0;
}

const files = (dir) => existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(dir, f)).sort() : [];
const nodeTest = (list) => ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...list];
const only = process.env.TEST_ONLY?.split(',');
const want = (name) => !only || only.includes(name);

if (!process.env.SKIP_BUILD) {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (b.status !== 0) { console.error('build failed'); process.exit(1); }
}

if (want('typecheck')) step('typecheck (tsc)', process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', '.']);
if (want('unit')) step('unit tests', process.execPath, nodeTest(files('tests/unit')));
if (want('pglite')) step('API tests on PGlite', process.execPath, nodeTest(files('tests/api')), { TEST_DB: 'pglite' });

if (want('postgres') && process.env.TEST_DATABASE_URL) {
  // .ci/run made a fresh database for this run.
  step('API tests on PostgreSQL', process.execPath, nodeTest(files('tests/api')), { TEST_DB: 'postgres', DATABASE_URL: process.env.TEST_DATABASE_URL });
} else if (want('postgres')) {
  const base = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `svc_test_${Date.now()}_${process.pid}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  try {
    step('API tests on PostgreSQL', process.execPath, nodeTest(files('tests/api')), { TEST_DB: 'postgres', DATABASE_URL: url.toString() });
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

// Several instances (CONTRACTS §9): real server processes on a fresh PostgreSQL database; the
// tests start their own private Redis (and PostgreSQL for the restart test).
if (want('multi') && files('tests/multi').length > 0) {
  const base = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `svc_multi_${Date.now()}_${process.pid}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  try {
    step('multi-instance tests', process.execPath, nodeTest(files('tests/multi')), { TEST_DB: 'postgres', DATABASE_URL: url.toString() });
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

if (want('e2e') && existsSync('playwright.config.ts')) {
  step('browser tests (Playwright, Chromium)', process.execPath, ['node_modules/@playwright/test/cli.js', 'test']);
}

console.log('\n=== summary ===');
let pass = 0; let fail = 0;
for (const r of results) {
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.pass} passed, ${r.fail} failed (${r.seconds.toFixed(0)} s)`);
  pass += r.pass; fail += r.fail;
}
console.log(`${pass} passed, ${fail} failed`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
