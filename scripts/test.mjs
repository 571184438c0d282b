// `npm test`: production build, then the linter and every suite (docs/testing.md says what runs where and why).
// The browser suite, type check, unit tests and each API test file on PGlite and on PostgreSQL are
// jobs of one pool (TEST_CONCURRENCY at once, default the core count); each API file gets a
// database of its own, copied from a migrated template. The multi-instance suite then runs alone.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';

/** A job must finish within this (a hang fails the job instead of eating CI's whole budget). */
const STEP_TIMEOUT_MS = Number(process.env.TEST_STEP_TIMEOUT_MS ?? 60 * 60_000);
const CONCURRENCY = Math.max(1, Number(process.env.TEST_CONCURRENCY ?? os.availableParallelism()));
const only = process.env.TEST_ONLY?.split(',');
const want = (name) => !only || only.includes(name);
const PG_BASE = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const runId = `${Date.now()}_${process.pid}`;

/** Runs one command; its output is buffered and printed whole when it ends, so jobs may overlap. */
function run(name, cmd, args, env = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
    });
    const timer = setTimeout(() => {
      err += `\n${name}: no end after ${STEP_TIMEOUT_MS / 60_000} min; stopped\n`;
      child.kill('SIGKILL');
    }, STEP_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      console.log(`\n=== ${name} (${seconds.toFixed(0)} s) ===`);
      process.stdout.write(out);
      process.stderr.write(err);
      const pass = Number(/^ℹ pass (\d+)/m.exec(out)?.[1] ?? /^\s+(\d+) passed/m.exec(out)?.[1] ?? 0);
      const fail = Number(/^ℹ fail (\d+)/m.exec(out)?.[1] ?? /^\s+(\d+) failed/m.exec(out)?.[1] ?? 0);
      resolve({ name, ok: code === 0, pass, fail: code === 0 ? fail : Math.max(fail, 1), seconds, named: namedTests(out) });
    });
  });
}

/** The failed and flaky tests a job's output names (node's spec reporter: its "failing tests" list; Playwright's list: its closing lists). */
function namedTests(output) {
  const failed = new Set();
  const flaky = new Set();
  let list = null;
  let failing = false;
  let testAt = false;
  for (const raw of output.split('\n')) {
    const line = raw.replace(/\x1b\[[0-9;]*m/g, '');
    const pw = /^\s+\d+ (failed|flaky)$/.exec(line);
    if (pw) list = pw[1] === 'failed' ? failed : flaky;
    else if (list && /^\s+\[\w+\] › /.test(line)) list.add(line.trim().replace(/\s*─+$/, ''));
    else if (list && line.trim() && !/^\s+\d+ (passed|skipped|did not run|interrupted)/.test(line)) list = null;
    // node: after "✖ failing tests:", each "test at <file>" line is followed by the failed test's name.
    if (/^✖ failing tests:?$/.test(line.trim())) failing = true;
    else if (failing && /^test at /.test(line)) testAt = true;
    else if (testAt) {
      const node = /^\s*✖ (.+?)(?: \([\d.]+m?s\))?$/.exec(line);
      if (node) failed.add(node[1]);
      testAt = false;
    }
  }
  return { failed: [...failed], flaky: [...flaky] };
}

const files = (dir) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => path.join(dir, f))
        .sort()
    : [];
// --test-force-exit: a file's process ends when its tests have (a timer left by a server under test
// must not hold every file for seconds; the servers' own shutdown is tested where it matters).
const nodeTest = (list) => ['--import', 'tsx', '--test', '--test-force-exit', '--test-concurrency=1', '--test-reporter=spec', ...list];
const tsx = (file) => ['--import', 'tsx', file];

if (!process.env.SKIP_BUILD) {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (b.status !== 0) {
    console.error('build failed');
    process.exit(1);
  }
}

const admin = postgres(PG_BASE, { max: 1, onnotice: () => {} });
const databaseUrl = (name) => {
  const u = new URL(PG_BASE);
  u.pathname = `/${name}`;
  return u.toString();
};
let databases = 0;
async function createDatabase(name, template) {
  await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  return databaseUrl(name);
}
const dropDatabase = (name) => admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});

const results = [];
const groupOf = new Map();
const record = (group, r) => {
  results.push(r);
  groupOf.set(r, group);
  return r;
};
const pglite = want('pglite');
const pg = want('postgres');
const apiFiles = files('tests/api').filter((f) => !process.env.TEST_API_MATCH || f.includes(process.env.TEST_API_MATCH));

// Templates: migrated once, copied per API file (PGlite: a directory; PostgreSQL: CREATE DATABASE … TEMPLATE).
const templateDir = pglite && apiFiles.length ? mkdtempSync(path.join(os.tmpdir(), 'svc-template-')) : null;
const pgTemplate = pg && apiFiles.length ? `svc_tpl_${runId}` : null;
const templates = [];
if (templateDir)
  templates.push(run('migrated PGlite template', process.execPath, tsx('tests/helpers/migrate-db.ts'), { DATA_DIR: templateDir, DATABASE_URL: '' }));
if (pgTemplate)
  templates.push(
    createDatabase(pgTemplate).then((url) => run('migrated PostgreSQL template', process.execPath, tsx('tests/helpers/migrate-db.ts'), { DATABASE_URL: url })),
  );
const ready = Promise.all(templates).then((rs) => {
  const bad = rs.filter((r) => !r.ok);
  for (const r of bad) record('setup', r);
  return bad.length === 0;
});

/** Jobs of the pool, largest files first (their size is the best cheap guess of their length). */
const jobs = [];
if (want('lint'))
  jobs.push({
    group: 'lint and format (Biome)',
    size: Infinity,
    go: () => run('lint and format (Biome)', process.execPath, ['node_modules/@biomejs/biome/bin/biome', 'ci', '--colors=off', '--reporter=summary', '.']),
  });
if (want('typecheck'))
  jobs.push({
    group: 'typecheck (tsc)',
    size: Infinity,
    go: () => run('typecheck (tsc)', process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', '.']),
  });
if (want('unit')) jobs.push({ group: 'unit tests', size: 1e9, go: () => run('unit tests', process.execPath, nodeTest(files('tests/unit'))) });
/**
 * A file whose subject does not depend on the database (input checks, transport, documents, address
 * rules) or exists on one only says so in its head: `// One database: PostgreSQL — why`. PGlite is
 * PostgreSQL's own engine, so the same SQL behaves alike; files about pooling, locks, concurrency or
 * the driver run on both (docs/testing.md).
 */
const oneDatabase = (file) => /^\/\/ One database: (PGlite|PostgreSQL)\b/m.exec(readFileSync(file, 'utf8').slice(0, 4000))?.[1] ?? null;
for (const file of apiFiles) {
  const size = statSync(file).size;
  const base = path.basename(file);
  const single = oneDatabase(file);
  if (pglite && single !== 'PostgreSQL') {
    jobs.push({
      group: 'API tests on PGlite',
      size,
      go: async () => {
        if (!(await ready)) return null;
        return run(`API on PGlite: ${base}`, process.execPath, nodeTest([file]), { TEST_DB: 'pglite', TEST_PGLITE_TEMPLATE: templateDir });
      },
    });
  }
  if (pg && single !== 'PGlite') {
    jobs.push({
      group: 'API tests on PostgreSQL',
      size,
      go: async () => {
        if (!(await ready)) return null;
        const name = `svc_t_${runId}_${++databases}`;
        const url = await createDatabase(name, pgTemplate);
        try {
          return await run(`API on PostgreSQL: ${base}`, process.execPath, nodeTest([file]), { TEST_DB: 'postgres', DATABASE_URL: url });
        } finally {
          await dropDatabase(name);
        }
      },
    });
  }
}
jobs.sort((a, b) => b.size - a.size);
// The browser suite mostly waits on the browser and the server (about one core of two): it takes
// a slot of the pool first and the other slots run the rest beside it.
if (want('e2e') && existsSync('playwright.config.ts'))
  jobs.unshift({
    group: 'browser tests (Playwright, Chromium)',
    go: () => run('browser tests (Playwright, Chromium)', process.execPath, ['node_modules/@playwright/test/cli.js', 'test']),
  });

let next = 0;
async function worker() {
  while (next < jobs.length) {
    const job = jobs[next++];
    const r = await job.go();
    if (r) record(job.group, r);
  }
}
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, jobs.length) }, worker));
if (templateDir) rmSync(templateDir, { recursive: true, force: true });
if (pgTemplate) await dropDatabase(pgTemplate);

if (want('multi') && files('tests/multi').length > 0) {
  // Several instances behind nginx: a fresh PostgreSQL database and a Redis db index of their own.
  const name = `svc_multi_${runId}`;
  const url = await createDatabase(name);
  try {
    record(
      'multi-instance tests (3 instances, nginx, PostgreSQL, Redis)',
      await run('multi-instance tests (3 instances, nginx, PostgreSQL, Redis)', process.execPath, nodeTest(files('tests/multi')), {
        TEST_DB: 'postgres',
        DATABASE_URL: url,
        REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15',
        REDIS_PREFIX: `svc-test-${process.pid}:`,
      }),
    );
  } finally {
    await dropDatabase(name);
  }
}
await admin.end();

console.log('\n=== summary ===');
const groups = new Map();
for (const r of results) {
  const g = groupOf.get(r);
  const s = groups.get(g) ?? { ok: true, pass: 0, fail: 0, seconds: 0, failed: [] };
  s.ok &&= r.ok;
  s.pass += r.pass;
  s.fail += r.fail;
  s.seconds += r.seconds;
  if (!r.ok) s.failed.push(r.name);
  groups.set(g, s);
}
let pass = 0;
let fail = 0;
for (const [g, s] of groups) {
  console.log(
    `${s.ok ? 'ok  ' : 'FAIL'} ${g}: ${s.pass} passed, ${s.fail} failed (${s.seconds.toFixed(0)} s of work)${s.failed.length ? ` — ${s.failed.join('; ')}` : ''}`,
  );
  pass += s.pass;
  fail += s.fail;
}
// Last, so the tail of CI's log names what failed (and what passed only on its retry).
for (const r of results) {
  for (const t of r.named?.flaky ?? []) console.log(`flaky (passed on retry) in ${r.name}: ${t}`);
  if (!r.ok) for (const t of (r.named?.failed ?? []).slice(0, 12)) console.log(`failed in ${r.name}: ${t}`);
}
console.log(`${pass} passed, ${fail} failed`);
process.exit(results.length > 0 && results.every((r) => r.ok) ? 0 : 1);
