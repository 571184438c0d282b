// `npm test`: production build, unit tests, API tests on PGlite AND PostgreSQL, browser tests.
// PostgreSQL: a fresh database per run on TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';

const results = [];
/** A step must finish within this (a hang fails the step instead of eating CI's whole budget). */
const STEP_TIMEOUT_MS = Number(process.env.TEST_STEP_TIMEOUT_MS ?? 60 * 60_000);

/**
 * Runs one suite as a child process; its output is buffered and printed whole when it ends, so
 * two steps may run side by side (the API suites on PGlite and on PostgreSQL share nothing).
 */
function step(name, cmd, args, env = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { out += d; });
    child.stderr.setEncoding('utf8').on('data', (d) => { err += d; });
    const timer = setTimeout(() => { err += `\n${name}: no end after ${STEP_TIMEOUT_MS / 60_000} min; stopped\n`; child.kill('SIGKILL'); }, STEP_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      console.log(`\n=== ${name} ===`);
      process.stdout.write(out);
      process.stderr.write(err);
      const pass = Number(/^ℹ pass (\d+)/m.exec(out)?.[1] ?? /^\s+(\d+) passed/m.exec(out)?.[1] ?? 0);
      const fail = Number(/^ℹ fail (\d+)/m.exec(out)?.[1] ?? /^\s+(\d+) failed/m.exec(out)?.[1] ?? 0);
      results.push({ name, ok: code === 0, pass, fail: code === 0 ? fail : Math.max(fail, 1), seconds: (Date.now() - started) / 1000 });
      resolve(code === 0);
    });
  });
}

const files = (dir) => existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.test.ts')).map((f) => path.join(dir, f)).sort() : [];
// --test-force-exit: a file's process ends when its tests have (a timer left by a server under test
// must not hold every file for seconds; the servers' own shutdown is tested where it matters).
const nodeTest = (list) => ['--import', 'tsx', '--test', '--test-force-exit', '--test-concurrency=1', '--test-reporter=spec', ...list];
const only = process.env.TEST_ONLY?.split(',');
const want = (name) => !only || only.includes(name);

if (!process.env.SKIP_BUILD) {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (b.status !== 0) { console.error('build failed'); process.exit(1); }
}

if (want('typecheck')) await step('typecheck (tsc)', process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', '.']);
if (want('unit')) await step('unit tests', process.execPath, nodeTest(files('tests/unit')));
// The API suites on PGlite and on PostgreSQL run side by side (separate databases, random ports).
const apiSteps = [];
if (want('pglite')) apiSteps.push(step('API tests on PGlite', process.execPath, nodeTest(files('tests/api')), { TEST_DB: 'pglite' }));
if (want('postgres') && process.env.TEST_DATABASE_URL) {
  // .ci/run made a fresh database for this run.
  apiSteps.push(step('API tests on PostgreSQL', process.execPath, nodeTest(files('tests/api')), { TEST_DB: 'postgres', DATABASE_URL: process.env.TEST_DATABASE_URL }));
} else if (want('postgres')) {
  const base = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `svc_test_${Date.now()}_${process.pid}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  apiSteps.push(step('API tests on PostgreSQL', process.execPath, nodeTest(files('tests/api')), { TEST_DB: 'postgres', DATABASE_URL: url.toString() })
    .finally(async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
      await admin.end();
    }));
}
await Promise.all(apiSteps);

if (want('multi') && files('tests/multi').length > 0) {
  // Several instances behind nginx: a fresh PostgreSQL database and a Redis db index of their own.
  const base = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `svc_multi_${Date.now()}_${process.pid}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  try {
    await step('multi-instance tests (3 instances, nginx, PostgreSQL, Redis)', process.execPath, nodeTest(files('tests/multi')), {
      TEST_DB: 'postgres', DATABASE_URL: url.toString(), REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15', REDIS_PREFIX: `svc-test-${process.pid}:`,
    });
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

if (want('e2e') && existsSync('playwright.config.ts')) {
  await step('browser tests (Playwright, Chromium)', process.execPath, ['node_modules/@playwright/test/cli.js', 'test']);
}

console.log('\n=== summary ===');
let pass = 0; let fail = 0;
for (const r of results) {
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name}: ${r.pass} passed, ${r.fail} failed (${r.seconds.toFixed(0)} s)`);
  pass += r.pass; fail += r.fail;
}
console.log(`${pass} passed, ${fail} failed`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
