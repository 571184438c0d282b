/**
 * `npm run bench:api` — Customer API benchmark on a deterministic dataset (see BENCHMARKS.md).
 *
 *   npm run bench:api                         100k conversations / 1M responses on PostgreSQL
 *   npm run bench:api -- --pglite-compare     10k / 100k on PostgreSQL AND PGlite, c=1 ratio
 *   npm run bench:api -- --smoke              1k / 10k, short runs, writes nothing (< 1 min)
 *
 * Options: --conversations N --responses N --seed N --runs N --warmup N --duration S
 *   --concurrency N --keep-db (leave the PostgreSQL database, print its name) --reuse-db NAME
 *   (skip generation and import; use that database) --keep-file --write / --no-write
 *   --no-build --explain-all --pg-url URL --timeout-minutes N --quiet-wait SECONDS --repeat N
 *   (N measurement rounds on a shared machine; the tables show the median, HTTP p50 with its range)
 *   --import auto|cli|runner (auto: the CLI, and if it stalls or fails, tests/bench/import-runner.ts,
 *   which runs the same importNdjson with its input attached before the first await)
 *
 *   --scenarios ID,ID (only those, ids as in scenarios.ts; the full mode)
 *   --cpu-prof (both servers under test write a V8 CPU profile per thread to bench-data/prof/<server>/ when stopped)
 *
 * The full mode starts the floor (tests/bench/floor-server.ts: raw node:http + postgres.js,
 * prepared statements, no auth) beside svc on the same database, checks that both answer every
 * scenario with the same JSON, and reports svc's p50/p99 and c=N throughput as ratios to it,
 * measured side by side.
 *
 * Everything runs on loopback: PostgreSQL at 127.0.0.1, the server on 127.0.0.1. The script
 * stops the server it started and drops the databases it created, also on failure or Ctrl-C.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import postgres from 'postgres';
import { COMMON_TERM, CONVERSATION_TERM, GENERATOR_VERSION, RARE_TERM, generateDataset, type DatasetSummary } from './dataset';
import { HttpClient, closedLoop, sequential, type LatencyStats, type ThroughputStats } from './stats';
import type { DirectResult, Picks, Scenario, TargetKind } from './scenarios';

const ROOT = path.resolve(__dirname, '..', '..');
const DATA = path.join(ROOT, 'bench-data');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const BENCHMARKS_MD = path.join(ROOT, 'BENCHMARKS.md');

// ---------------------------------------------------------------------------------------------
// Options

const { values: argv } = parseArgs({
  options: {
    conversations: { type: 'string' },
    responses: { type: 'string' },
    seed: { type: 'string' },
    runs: { type: 'string' },
    warmup: { type: 'string' },
    duration: { type: 'string' },
    concurrency: { type: 'string' },
    'pglite-compare': { type: 'boolean' },
    smoke: { type: 'boolean' },
    'keep-db': { type: 'boolean' },
    'reuse-db': { type: 'string' },
    'keep-file': { type: 'boolean' },
    write: { type: 'boolean' },
    'no-write': { type: 'boolean' },
    'no-build': { type: 'boolean' },
    'explain-all': { type: 'boolean' },
    'pg-url': { type: 'string' },
    'timeout-minutes': { type: 'string' },
    import: { type: 'string' },
    'quiet-wait': { type: 'string' },
    repeat: { type: 'string' },
    'cpu-prof': { type: 'boolean' },
    scenarios: { type: 'string' },
  },
  strict: true,
});

const compare = !!argv['pglite-compare'];
const smoke = !!argv.smoke;
const num = (v: string | undefined, d: number, name: string) => {
  if (v === undefined) return d;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number`);
  return n;
};
const defaults = smoke ? { c: 1_000, r: 10_000 } : compare ? { c: 10_000, r: 100_000 } : { c: 100_000, r: 1_000_000 };
const opts = {
  conversations: Math.floor(num(argv.conversations, defaults.c, 'conversations')),
  responses: Math.floor(num(argv.responses, defaults.r, 'responses')),
  seed: Math.floor(num(argv.seed, 42, 'seed')),
  runs: Math.max(1, Math.floor(num(argv.runs, smoke ? 50 : 300, 'runs'))),
  warmup: Math.floor(num(argv.warmup, smoke ? 10 : 50, 'warmup')),
  duration: num(argv.duration, smoke ? 1 : 5, 'duration'),
  concurrency: Math.max(1, Math.floor(num(argv.concurrency, 32, 'concurrency'))),
  pgUrl: argv['pg-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  timeoutMinutes: num(argv['timeout-minutes'], 180, 'timeout-minutes'),
  /** Seconds to wait for other processes to leave the CPUs before measuring. */
  quietWait: num(argv['quiet-wait'], smoke ? 0 : 600, 'quiet-wait'),
  /** Measurement rounds (HTTP then SQL); the tables show the median of the rounds. */
  repeat: Math.max(1, Math.floor(num(argv.repeat, smoke || compare ? 1 : 3, 'repeat'))),
};
if (argv.import && !['auto', 'cli', 'runner'].includes(argv.import)) throw new Error('--import must be auto, cli or runner');
const defaultSizes = opts.conversations === defaults.c && opts.responses === defaults.r && !smoke;
const write = !argv['no-write'] && (!!argv.write || (defaultSizes && !argv['reuse-db']) || (!!argv['reuse-db'] && !!argv.write));
if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(opts.pgUrl).hostname)) throw new Error('--pg-url must be a loopback address');

// ---------------------------------------------------------------------------------------------
// Cleanup: everything this run started or created, undone in reverse order, once.

const cleanups: Array<{ name: string; fn: () => Promise<void> | void }> = [];
let cleaning: Promise<void> | undefined;
function onCleanup(name: string, fn: () => Promise<void> | void): () => void {
  const entry = { name, fn };
  cleanups.push(entry);
  return () => {
    const i = cleanups.indexOf(entry);
    if (i >= 0) cleanups.splice(i, 1);
  };
}
function cleanupAll(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const c = cleanups.pop()!;
      try {
        await c.fn();
      } catch (e) {
        log(`cleanup ${c.name} failed: ${(e as Error).message}`);
      }
    }
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanupAll().finally(() => process.exit(130));
  });
}
const watchdog = setTimeout(() => {
  log(`timeout after ${opts.timeoutMinutes} minutes: cleaning up`);
  void cleanupAll().finally(() => process.exit(124));
}, opts.timeoutMinutes * 60_000);
watchdog.unref();

const t0 = Date.now();
function log(m: string) {
  process.stderr.write(`[bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(5)}s] ${m}\n`);
}

// ---------------------------------------------------------------------------------------------
// Helpers: environment, build, CLI, server, PostgreSQL

type DbTarget = { kind: 'postgres'; url: string; name: string } | { kind: 'pglite'; dataDir: string };

function baseEnv(target: DbTarget): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', SVC_DEMO: '0' };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'NODE_ENV', 'LOG_REQUESTS', 'SVC_ENV']) delete env[k];
  if (target.kind === 'postgres') env.DATABASE_URL = target.url;
  else env.DATA_DIR = target.dataDir;
  return env;
}

function newestMtime(p: string): number {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let max = 0;
  for (const e of fs.readdirSync(p)) if (e !== 'node_modules') max = Math.max(max, newestMtime(path.join(p, e)));
  return max;
}

/** Other processes running a production build (never start a second one in the same .next). */
function buildsInProgress(): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid) continue;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue;
    }
    if (/scripts\/build\.mjs|next\/dist\/bin\/next build|\bnext build\b/.test(cmd)) found.push(`${pid}: ${cmd.trim().slice(0, 100)}`);
  }
  return found;
}

async function waitForOtherBuilds(): Promise<void> {
  const deadline = Date.now() + 20 * 60_000;
  for (let first = true; ; first = false) {
    const builds = buildsInProgress();
    if (builds.length === 0) return;
    if (first) log(`waiting for a production build in progress: ${builds.join('; ')}`);
    if (Date.now() > deadline) throw new Error('another production build has been running for 20 minutes');
    await new Promise((r) => setTimeout(r, 5000));
  }
}

/** Fraction of total CPU time busy over `ms`, from /proc/stat. */
async function cpuBusy(ms: number): Promise<number> {
  const read = () => {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (f[3] ?? 0) + (f[4] ?? 0);
    return { idle, total: f.reduce((a, b) => a + b, 0) };
  };
  const a = read();
  await new Promise((r) => setTimeout(r, ms));
  const b = read();
  return 1 - (b.idle - a.idle) / Math.max(1, b.total - a.total);
}

/** Waits (bounded by --quiet-wait) until the machine is idle; returns the CPU busy share seen last. */
async function waitForQuiet(): Promise<number> {
  const deadline = Date.now() + opts.quietWait * 1000;
  let busy = await cpuBusy(2000);
  if (busy > 0.15) log(`other processes use ${(busy * 100).toFixed(0)}% of the CPUs; waiting up to ${opts.quietWait} s for quiet`);
  while (busy > 0.15 && Date.now() < deadline) busy = await cpuBusy(5000);
  if (busy > 0.15) log(`WARNING: measuring while other processes use ${(busy * 100).toFixed(0)}% of the CPUs`);
  return busy;
}

/** Production build: built when missing, rebuilt when a source is newer than it (unless --no-build). */
async function ensureBuild(): Promise<string> {
  await waitForOtherBuilds();
  const outputs = ['.next/BUILD_ID', 'dist/server.js'].map((f) => path.join(ROOT, f));
  const missing = outputs.some((f) => !fs.existsSync(f));
  const built = missing ? 0 : Math.min(...outputs.map((f) => fs.statSync(f).mtimeMs));
  const sources = Math.max(...['app', 'lib', 'db', 'server.ts', 'next.config.mjs'].map((f) => newestMtime(path.join(ROOT, f))));
  if (!missing && sources <= built) return 'up to date';
  if (!missing && argv['no-build']) {
    log('WARNING: the production build is older than the sources (--no-build: not rebuilding)');
    return 'stale (not rebuilt)';
  }
  log(missing ? 'no production build: node scripts/build.mjs' : 'sources are newer than the production build: node scripts/build.mjs');
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: 15 * 60_000 });
  if (r.status !== 0) throw new Error('build failed');
  return 'rebuilt for this run';
}

/** Runs the admin CLI; returns its one JSON object and how long it took. */
function cli(target: DbTarget, args: string[]): { json: Record<string, unknown>; seconds: number; stderr: string } {
  const started = Date.now();
  const r = spawnSync(TSX, ['lib/cli/main.ts', ...args], {
    cwd: ROOT,
    env: baseEnv(target),
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: 60 * 60_000,
  });
  const seconds = (Date.now() - started) / 1000;
  if (r.status !== 0) throw new Error(`cli ${args.slice(0, 2).join(' ')} failed (exit ${r.status}): ${(r.stderr ?? '').trim().slice(-2000)}`);
  return { json: JSON.parse(r.stdout.trim()) as Record<string, unknown>, seconds, stderr: r.stderr };
}

/** Runs a child to completion (bounded); `stalled` is polled every 5 s and may stop it. */
function runChild(
  args: string[],
  target: DbTarget,
  timeoutMs: number,
  stalled?: () => Promise<boolean>,
): Promise<{ stdout: string; stderr: string; seconds: number }> {
  const started = Date.now();
  const child = spawn(TSX, args, { cwd: ROOT, env: baseEnv(target), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    const t = c.toString();
    stderr += t;
    for (const l of t.split('\n')) if (l.trim()) log(`  | ${l.trim()}`);
  });
  let reason = '';
  const kill = (why: string) => {
    if (!reason) {
      reason = why;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    }
  };
  const undo = onCleanup(`child ${args[0]} (pid ${child.pid})`, () => kill('cleanup'));
  const timer = setTimeout(() => kill(`no result after ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
  const poll = stalled
    ? setInterval(() => {
        void stalled().then(
          (s) => {
            if (s) kill('stalled: its database session sat idle in its transaction for 15 s (waiting for input)');
          },
          () => {},
        );
      }, 3000)
    : undefined;
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      undo();
      const seconds = (Date.now() - started) / 1000;
      if (code === 0 && !reason) resolve({ stdout, stderr, seconds });
      else
        reject(
          new Error(
            `${args.slice(0, 3).join(' ')}: ${reason || `exit ${code}`}${stderr ? ` (${stderr.trim().split('\n').slice(-3).join(' / ').slice(0, 600)})` : ''}`,
          ),
        );
    });
  });
}

let importVia: 'cli' | 'runner' = argv.import === 'runner' ? 'runner' : 'cli';
let cliImportProblem: string | undefined;

async function runImport(target: DbTarget, accountId: number, file: string, records: number): Promise<ImportStats> {
  const timeoutMs = (300 + records / 200) * 1000;
  if (importVia === 'cli') {
    const stalled =
      target.kind === 'postgres'
        ? async () => {
            const c = postgres(opts.pgUrl, { max: 1, onnotice: () => {} });
            try {
              const [r] = await c.unsafe<{ n: number }[]>(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1
          AND state = 'idle in transaction' AND now() - state_change > interval '15 seconds'`,
                [target.name],
              );
              return (r?.n ?? 0) > 0;
            } finally {
              await c.end({ timeout: 5 });
            }
          }
        : undefined;
    try {
      const r = await runChild(['lib/cli/main.ts', 'import', '--account', String(accountId), '--file', file], target, timeoutMs, stalled);
      return importStats(r, 'CLI `import`');
    } catch (e) {
      if (argv.import === 'cli') throw e;
      cliImportProblem = (e as Error).message;
      log(`CLI import failed: ${cliImportProblem}; importing with tests/bench/import-runner.ts instead`);
      importVia = 'runner';
    }
  }
  const r = await runChild(['tests/bench/import-runner.ts', String(accountId), file], target, timeoutMs);
  return importStats(r, 'tests/bench/import-runner.ts (importNdjson)');
}

function importStats(r: { stdout: string; stderr: string; seconds: number }, via: string): ImportStats {
  const json = JSON.parse(r.stdout.trim()) as { conversations: number; responses: number };
  const records = json.conversations + json.responses;
  return {
    records,
    seconds: r.seconds,
    rps: records / r.seconds,
    via,
    loadAfter: os.loadavg()[0]!,
    cliReported: /import: (\d+ records in [\d.]+ s \(\d+ records\/s\))/.exec(r.stderr)?.[1],
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

type Server = { url: string; child: ChildProcess; stop: () => Promise<void>; logFile: string };

/** Node flags of the servers under test: `--cpu-prof` writes a profile of each into bench-data/prof/. */
function profFlags(label: string): string[] {
  if (!argv['cpu-prof']) return [];
  const dir = path.join(DATA, 'prof', label);
  fs.mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', '--cpu-prof-dir', dir];
}

/**
 * A server under test as a separate process; resolves once /healthz is 200. By default svc:
 * `node dist/server.js` in production mode. `floorAccount`: the floor (tests/bench/floor-server.ts)
 * for that account instead, on the same database.
 */
async function startServer(target: DbTarget, label: string, floorAccount?: number): Promise<Server> {
  const port = await freePort();
  fs.mkdirSync(DATA, { recursive: true });
  const logFile = path.join(DATA, `server-${label}.log`);
  const out = fs.openSync(logFile, 'w');
  const args = floorAccount === undefined ? ['dist/server.js'] : ['--import', 'tsx', 'tests/bench/floor-server.ts', String(port)];
  const child = spawn(process.execPath, [...profFlags(label), ...args], {
    cwd: ROOT,
    stdio: ['ignore', out, out],
    env: {
      ...baseEnv(target),
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      ...(floorAccount === undefined ? {} : { FLOOR_ACCOUNT_ID: String(floorAccount) }),
    },
  });
  fs.closeSync(out);
  let exited = false;
  const exitedP = new Promise<void>((r) =>
    child.once('exit', () => {
      exited = true;
      r();
    }),
  );
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const t = new Promise<boolean>((r) => setTimeout(() => r(false), 15_000).unref());
    if (!(await Promise.race([exitedP.then(() => true), t]))) {
      child.kill('SIGKILL');
      await exitedP;
    }
  };
  const undo = onCleanup(`server ${label} (pid ${child.pid})`, stop);
  const url = `http://127.0.0.1:${port}`;
  const probe = new HttpClient(new URL(url), {}, 1);
  try {
    const deadline = Date.now() + 180_000;
    for (;;) {
      if (exited) throw new Error(`server exited during start; see ${logFile}:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
      try {
        if ((await probe.get('/healthz', 2000)).status === 200) break;
      } catch {
        /* not yet */
      }
      if (Date.now() > deadline) throw new Error(`server did not answer /healthz within 180 s; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    probe.close();
  }
  log(`server ${label} (pid ${child.pid}) listening on ${url}`);
  return {
    url,
    child,
    logFile,
    stop: async () => {
      await stop();
      undo();
    },
  };
}

async function createPgDatabase(prefix: string): Promise<DbTarget & { kind: 'postgres' }> {
  const name = `${prefix}_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  const admin = postgres(opts.pgUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(opts.pgUrl);
  url.pathname = `/${name}`;
  log(`created database ${name}`);
  return { kind: 'postgres', url: url.toString(), name };
}

async function dropPgDatabase(name: string): Promise<void> {
  const admin = postgres(opts.pgUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  log(`dropped database ${name}`);
}

async function pgInfo(url: string): Promise<Record<string, string>> {
  const c = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [v] = await c.unsafe<{ v: string }[]>(`SELECT version() AS v`);
    const settings = await c.unsafe<{ name: string; setting: string; unit: string | null }[]>(
      `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers','work_mem','effective_cache_size','jit','random_page_cost','max_parallel_workers_per_gather')`,
    );
    const fmt = (s: { setting: string; unit: string | null }) =>
      s.unit === '8kB' ? `${Math.round((Number(s.setting) * 8) / 1024)}MB` : s.unit === 'kB' ? `${Math.round(Number(s.setting) / 1024)}MB` : s.setting;
    return { version: v!.v.split(' on ')[0]!, settings: settings.map((s) => `${s.name}=${fmt(s)}`).join(', ') };
  } finally {
    await c.end({ timeout: 5 });
  }
}

function machine() {
  const cpu = /model name\s*:\s*(.+)/.exec(fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1] ?? os.cpus()[0]?.model ?? '?';
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout?.trim() || String(os.availableParallelism());
  return { nproc, memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`, cpu: cpu.trim(), node: process.version, os: `${os.type()} ${os.release()}` };
}

function gitState(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || '?';
  const dirty = (spawnSync('git', ['status', '--porcelain', '--', 'app', 'lib', 'db', 'server.ts'], { cwd: ROOT, encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.slice(3).split('/').slice(0, 2).join('/'));
  return dirty.length > 0 ? `${head} + uncommitted changes in ${[...new Set(dirty)].join(', ')}` : head;
}

// ---------------------------------------------------------------------------------------------
// Dataset, account, import

async function dataset(): Promise<DatasetSummary & { reused: boolean }> {
  fs.mkdirSync(DATA, { recursive: true });
  const file = path.join(DATA, `dataset-c${opts.conversations}-r${opts.responses}-s${opts.seed}-v${GENERATOR_VERSION}.ndjson`);
  const meta = `${file}.json`;
  if (!argv['keep-file'])
    onCleanup('dataset file', () => {
      fs.rmSync(file, { force: true });
      fs.rmSync(meta, { force: true });
    });
  if (fs.existsSync(file) && fs.existsSync(meta)) {
    log(`reusing ${path.relative(ROOT, file)}`);
    return { ...(JSON.parse(fs.readFileSync(meta, 'utf8')) as DatasetSummary), reused: true };
  }
  log(`generating ${opts.conversations} conversations / ${opts.responses} responses (seed ${opts.seed})`);
  const tmp = `${file}.tmp`;
  onCleanup('partial dataset file', () => fs.rmSync(tmp, { force: true }));
  const summary = await generateDataset(tmp, { conversations: opts.conversations, responses: opts.responses, seed: opts.seed });
  fs.renameSync(tmp, file);
  summary.file = file;
  fs.writeFileSync(meta, JSON.stringify(summary));
  log(`generated ${(summary.bytes / 2 ** 20).toFixed(0)} MiB in ${summary.seconds.toFixed(1)} s`);
  return { ...summary, reused: false };
}

type ImportStats = { records: number; seconds: number; rps: number; via: string; cliReported?: string; busyBefore?: number; loadAfter?: number };

async function setupAccount(target: DbTarget, file: string | null): Promise<{ accountId: number; key: string; imp?: ImportStats }> {
  let accountId: number;
  if (file) {
    const acc = cli(target, [
      'account',
      'create',
      '--name',
      'bench',
      '--admin-email',
      `bench-${Date.now()}@example.com`,
      '--admin-password',
      'bench-password-123',
    ]).json;
    accountId = acc.account_id as number;
  } else {
    const c = postgres((target as { url: string }).url, { max: 1, onnotice: () => {} });
    try {
      const [row] = await c.unsafe<{ id: number }[]>(`SELECT id FROM accounts ORDER BY response_count DESC, id LIMIT 1`);
      if (!row) throw new Error('the reused database has no account');
      accountId = row.id;
    } finally {
      await c.end({ timeout: 5 });
    }
  }
  const key = cli(target, ['apikey', 'create', '--account', String(accountId), '--name', 'bench']).json.key as string;
  if (!file) return { accountId, key };
  log(`importing into ${target.kind === 'postgres' ? target.name : target.dataDir} (account ${accountId})`);
  const expected = opts.conversations + opts.responses;
  const busyBefore = await waitForQuiet();
  const imp = await runImport(target, accountId, file, expected);
  imp.busyBefore = busyBefore;
  if (imp.records !== expected) throw new Error(`import reported ${imp.records} records, the file has ${expected}`);
  log(
    `import: ${imp.records} records in ${imp.seconds.toFixed(1)} s wall clock = ${Math.round(imp.rps)} records/s${imp.cliReported ? ` (its own figure: ${imp.cliReported})` : ''}`,
  );
  return { accountId, key, imp };
}

// ---------------------------------------------------------------------------------------------
// Measurement

type ScenarioResult = {
  scenario: Scenario;
  http: LatencyStats;
  sql?: DirectResult;
  load?: ThroughputStats;
  httpCount: number;
  sqlCount?: number;
  rows: number;
};

async function measureHttp(
  server: Server,
  key: string,
  scenarios: Scenario[],
  withLoad: boolean,
): Promise<Map<string, { http: LatencyStats; load?: ThroughputStats; count: number; rows: number }>> {
  const client = new HttpClient(new URL(server.url), { authorization: `Bearer ${key}`, accept: 'application/json' }, opts.concurrency);
  const out = new Map<string, { http: LatencyStats; load?: ThroughputStats; count: number; rows: number }>();
  try {
    for (const s of scenarios) {
      const first = JSON.parse(await client.ok(s.path(0))) as { count?: number; results?: unknown[] };
      if (s.target !== 'floor' && typeof first.count !== 'number' && !('id' in first))
        throw new Error(`${s.name}: unexpected answer ${JSON.stringify(first).slice(0, 200)}`);
      const count = typeof first.count === 'number' ? first.count : 1;
      const rows = Array.isArray(first.results) ? first.results.length : 1;
      const http = await sequential((i) => client.ok(s.path(i)), opts.warmup, opts.runs);
      let load: ThroughputStats | undefined;
      if (withLoad) {
        load = await closedLoop((i) => client.ok(s.path(i)), opts.concurrency, opts.duration);
        if (load.errors > 0) log(`  WARNING ${s.name}: ${load.errors} failed requests at c=${opts.concurrency}`);
      }
      log(
        `  http  ${s.name}: p50 ${http.p50.toFixed(2)} ms, p99 ${http.p99.toFixed(2)} ms${load ? `, ${Math.round(load.rps)} req/s at c=${opts.concurrency}` : ''} (count ${count}, ${rows} rows)`,
      );
      out.set(s.id, { http, load, count, rows });
    }
  } finally {
    client.close();
  }
  return out;
}

/** `--scenarios id,id`: only those (ids as in tests/bench/scenarios.ts), e.g. to profile one request. */
function onlyScenarios(all: Scenario[]): Scenario[] {
  if (!argv.scenarios) return all;
  const wanted = argv.scenarios.split(',').map((x) => x.trim());
  const unknown = wanted.filter((w) => !all.some((s) => s.id === w));
  if (unknown.length > 0) throw new Error(`--scenarios: unknown ${unknown.join(', ')}; known: ${all.map((s) => s.id).join(', ')}`);
  return all.filter((s) => wanted.includes(s.id));
}

type Side = { http: LatencyStats; load?: ThroughputStats };
type PairResult = { svc: Side; floor: Side; count: number; rows: number; same: string | null };

/**
 * Why svc's and the floor's answers to a scenario differ (null: the same JSON, compared parsed,
 * for three consecutive requests; by-id scenarios rotate, so three different records).
 */
async function compareBodies(s: Scenario, svc: HttpClient, floor: HttpClient): Promise<string | null> {
  if (s.target === 'floor') return null;
  for (let i = 0; i < 3; i++) {
    const a = JSON.parse(await svc.ok(s.path(i))) as { count?: number; id?: string; results?: Array<{ id?: string }> };
    const b = JSON.parse(await floor.ok(s.path(i))) as typeof a;
    if (isDeepStrictEqual(a, b)) continue;
    const ids = (x: typeof a) => (x.results ? x.results.map((r) => r.id).join(',') : x.id);
    if (a.count !== b.count) return `count ${a.count} vs floor ${b.count}`;
    if (ids(a) !== ids(b)) return `ids differ (${String(ids(a)).slice(0, 80)} vs floor ${String(ids(b)).slice(0, 80)})`;
    const diff = Object.keys({ ...a, ...b }).filter((k) => !isDeepStrictEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
    // Which fields of the first differing record: what the floor no longer matches.
    const [ra, rb] = [a.results?.[0] as Record<string, unknown> | undefined, b.results?.[0] as Record<string, unknown> | undefined];
    const fields = ra && rb ? Object.keys({ ...ra, ...rb }).filter((k) => !isDeepStrictEqual(ra[k], rb[k])) : [];
    return `bodies differ in ${diff.join(', ')}${fields.length ? ` (fields: ${fields.join(', ')})` : ''}`;
  }
  return null;
}

/**
 * svc and the floor side by side: per scenario, first the body check, then c=1 of one and of the
 * other, then c=N of one and of the other, so a change of the machine's load hits both; which
 * goes first alternates (`floorFirst`, flipped per round by the caller).
 */
async function measurePair(svcServer: Server, floorServer: Server, key: string, scenarios: Scenario[], floorFirst: boolean): Promise<Map<string, PairResult>> {
  const svc = new HttpClient(new URL(svcServer.url), { authorization: `Bearer ${key}`, accept: 'application/json' }, opts.concurrency);
  const floor = new HttpClient(new URL(floorServer.url), { accept: 'application/json' }, opts.concurrency);
  const out = new Map<string, PairResult>();
  const order = floorFirst
    ? ([
        ['floor', floor],
        ['svc', svc],
      ] as const)
    : ([
        ['svc', svc],
        ['floor', floor],
      ] as const);
  try {
    for (const s of scenarios) {
      const same = await compareBodies(s, svc, floor);
      if (same) log(`  MISMATCH ${s.name}: ${same}`);
      const first = JSON.parse(await svc.ok(s.path(0))) as { count?: number; results?: unknown[] };
      const count = typeof first.count === 'number' ? first.count : 1;
      const rows = Array.isArray(first.results) ? first.results.length : 1;
      const sides: Record<'svc' | 'floor', Side> = { svc: {} as Side, floor: {} as Side };
      for (const [name, client] of order) sides[name].http = await sequential((i) => client.ok(s.path(i)), opts.warmup, opts.runs);
      for (const [name, client] of order) {
        const load = await closedLoop((i) => client.ok(s.path(i)), opts.concurrency, opts.duration);
        if (load.errors > 0) log(`  WARNING ${s.name} (${name}): ${load.errors} failed requests at c=${opts.concurrency}`);
        sides[name].load = load;
      }
      const f = (x: Side) => `p50 ${x.http.p50.toFixed(2)} ms, p99 ${x.http.p99.toFixed(2)} ms, ${Math.round(x.load!.rps)} req/s`;
      log(`  ${s.name}: svc ${f(sides.svc)} | floor ${f(sides.floor)} (count ${count}, ${rows} rows${same ? `, ${same}` : ''})`);
      out.set(s.id, { ...sides, count, rows, same });
    }
  } finally {
    svc.close();
    floor.close();
  }
  return out;
}

/** The goals against the floor (issue 11): `ratio` svc/floor of the c=1 p50, `rps` svc/floor at c=N. */
function floorGoal(kind: TargetKind, svcP50: number, floorP50: number, ratio: number, rpsRatio: number): { met: boolean; text: string } {
  if (kind === 'floor') return { met: true, text: 'info' };
  const misses: string[] = [];
  const listLike = kind !== 'byid';
  if (!(ratio <= 1.3) && !(listLike && svcP50 - floorP50 <= 0.3)) {
    misses.push(`p50 ${ratio.toFixed(2)}× (+${fmtMs(svcP50 - floorP50)} ms)`);
  }
  if (!(rpsRatio >= 0.7)) misses.push(`c=${opts.concurrency} ${rpsRatio.toFixed(2)}×`);
  return misses.length === 0 ? { met: true, text: 'met' } : { met: false, text: `**missed**: ${misses.join('; ')}` };
}

function targetCheck(kind: TargetKind, p50: number, rps: number | undefined, targets: typeof import('./scenarios').TARGETS): { met: boolean; text: string } {
  const t = targets[kind];
  if (t.p50 === undefined) return { met: true, text: 'info' };
  const misses: string[] = [];
  if (!(p50 <= t.p50)) misses.push(`p50 ${fmtMs(p50)} ms is ${(p50 / t.p50).toFixed(1)}× the ${t.p50} ms target (+${fmtMs(p50 - t.p50)} ms)`);
  if (t.rps !== undefined && rps !== undefined && !(rps >= t.rps))
    misses.push(`${Math.round(rps).toLocaleString('en-US')} req/s is ${Math.round((1 - rps / t.rps) * 100)}% short of ${t.rps.toLocaleString('en-US')}`);
  return misses.length === 0 ? { met: true, text: 'met' } : { met: false, text: `**missed**: ${misses.join('; ')}` };
}

function fmtMs(x: number | undefined): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  return x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0);
}
const n0 = (x: number) => Math.round(x).toLocaleString('en-US');

async function explainScenarios(db: import('../../db/client').Db, scenarios: Scenario[], label: string): Promise<string> {
  const { explainingDb } = await import('./scenarios');
  const parts: string[] = [];
  for (const s of scenarios) {
    const plans: string[] = [];
    await s.direct(explainingDb(db, plans), 0);
    parts.push(`### ${s.name} (${label})\n\n\`\`\`\n${plans.join('\n\n')}\n\`\`\``);
  }
  return parts.join('\n\n');
}

// ---------------------------------------------------------------------------------------------
// Markdown

function replaceSection(marker: string, body: string) {
  const start = `<!-- bench:${marker}:start -->`;
  const end = `<!-- bench:${marker}:end -->`;
  let doc = fs.existsSync(BENCHMARKS_MD) ? fs.readFileSync(BENCHMARKS_MD, 'utf8') : '# Benchmarks\n';
  const block = `${start}\n${body.trim()}\n${end}`;
  const i = doc.indexOf(start);
  const j = doc.indexOf(end);
  doc = i >= 0 && j > i ? doc.slice(0, i) + block + doc.slice(j + end.length) : `${doc.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(BENCHMARKS_MD, doc);
  log(`wrote the ${marker} section of ${path.relative(ROOT, BENCHMARKS_MD)}`);
}

function importNote(): string {
  const problem = cliImportProblem && cliImportProblem.length > 400 ? `${cliImportProblem.slice(0, 400)}…` : cliImportProblem;
  return problem
    ? `\n\n**The CLI \`import\` did not complete** (${problem.replace(/\|/g, '/')}); the data was imported by tests/bench/import-runner.ts, which calls the same \`importNdjson\` of lib/imports/service.ts with the file's lines attached before the first await.`
    : '';
}

function header(title: string, env: { pg: Record<string, string>; build: string; data: DatasetSummary | null; busy?: number }) {
  const m = machine();
  const d = env.data;
  return [
    `## ${title}`,
    '',
    `- date: ${new Date().toISOString().replace('T', ' ').slice(0, 16)} UTC; code: ${gitState()}; production build ${env.build}`,
    `- machine: ${m.nproc} CPUs (${m.cpu}), ${m.memory} memory, ${m.os}; Node ${m.node}; the load generator, the server and PostgreSQL share these CPUs`,
    `- PostgreSQL: ${env.pg.version} (${env.pg.settings})`,
    d
      ? `- data: ${n0(d.conversations)} conversations, ${n0(d.responses)} responses, 20 channels, seed ${d.seed} (NDJSON ${(d.bytes / 2 ** 20).toFixed(0)} MiB; largest conversation ${n0(d.largestConversation)} responses, median ${d.medianConversation}; "${RARE_TERM}" in ${d.rareTermRows} rows, "${COMMON_TERM}" in ${n0(d.commonTermRows)} rows, "${CONVERSATION_TERM}" in ${n0(d.conversationTermTitles)} titles + the Billing channel)`
      : '- data: reused database (see its account counters)',
    ...(env.busy !== undefined
      ? [
          `- other CPU load just before measuring: ${(env.busy * 100).toFixed(0)}%${env.busy > 0.15 ? ' (**the machine was not idle; numbers are pessimistic**)' : ''}; load average after: ${os
            .loadavg()
            .map((x) => x.toFixed(2))
            .join(' / ')}`,
        ]
      : []),
    `- method: HTTP p50/p99 over ${opts.runs} sequential requests after ${opts.warmup} warm-up (keep-alive), req/s over ${opts.duration} s at c=${opts.concurrency}; SQL = the same db/queries functions through the driver from the benchmark process, p50 over ${opts.runs} runs${opts.repeat > 1 ? `; ${opts.repeat} rounds, every figure is the median of the rounds (HTTP p50 range in brackets)` : ''}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Modes

async function fullMode() {
  const build = await ensureBuild();
  const reuse = argv['reuse-db'];
  let target: DbTarget & { kind: 'postgres' };
  let data: (DatasetSummary & { reused: boolean }) | null = null;
  if (reuse) {
    if (!/^[a-z0-9_]+$/.test(reuse)) throw new Error('--reuse-db takes a database name');
    const url = new URL(opts.pgUrl);
    url.pathname = `/${reuse}`;
    target = { kind: 'postgres', url: url.toString(), name: reuse };
  } else {
    data = await dataset();
    target = await createPgDatabase('svc_bench');
    if (!argv['keep-db']) onCleanup(`database ${target.name}`, () => dropPgDatabase(target.name));
  }
  const setup = await setupAccount(target, data?.file ?? null);
  const { accountId, key } = setup;
  let imp = setup.imp;
  // What the run that created a kept database measured (dataset, import), for --reuse-db runs.
  const sidecar = path.join(DATA, `${target.name}.json`);
  if (reuse && fs.existsSync(sidecar)) {
    const saved = JSON.parse(fs.readFileSync(sidecar, 'utf8')) as { data: DatasetSummary; imp?: ImportStats; cliImportProblem?: string; date: string };
    data = { ...saved.data, reused: true };
    imp = saved.imp ? { ...saved.imp, via: `${saved.imp.via}, measured ${saved.date} when this database was created` } : undefined;
    cliImportProblem = saved.cliImportProblem;
  } else if (!reuse && argv['keep-db'] && data) {
    fs.writeFileSync(sidecar, JSON.stringify({ data, imp, cliImportProblem, date: new Date().toISOString().slice(0, 16).replace('T', ' ') }));
  }
  if (data && !argv['keep-file']) {
    fs.rmSync(data.file, { force: true });
    fs.rmSync(`${data.file}.json`, { force: true });
  }
  const pg = await pgInfo(target.url);

  // The bench process's own connection: set DATABASE_URL first, then load db/client.
  process.env.DATABASE_URL = target.url;
  delete process.env.DATA_DIR;
  const { getDb, closeDatabase } = await import('../../db/client');
  const { buildScenarios, lookupPicks, measureDirect, TARGETS } = await import('./scenarios');
  onCleanup('direct connection', () => closeDatabase());
  const db = await getDb();
  const picks = await lookupPicks(db, accountId);
  const scenarios = onlyScenarios(buildScenarios(picks));

  const server = await startServer(target, 'postgres');
  const floorServer = await startServer(target, 'floor', accountId);
  let busy = 0;
  const pairRounds: Array<Map<string, PairResult>> = [];
  const sqlRounds: Array<Map<string, DirectResult>> = [];
  const loads: string[] = [];
  const la = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join('/');
  for (let round = 1; round <= opts.repeat; round++) {
    busy = Math.max(busy, await waitForQuiet());
    const floorFirst = round % 2 === 0;
    const before = la();
    log(
      `round ${round}/${opts.repeat}: HTTP svc and floor side by side (${floorFirst ? 'floor' : 'svc'} first; c=1, then c=${opts.concurrency}); load average ${before}`,
    );
    pairRounds.push(await measurePair(server, floorServer, key, scenarios, floorFirst));
    loads.push(`round ${round}: ${before} → ${la()}`);
    // Both servers stay up but idle while the SQL is timed from this process.
    log(`round ${round}/${opts.repeat}: SQL through the driver (c=1)`);
    sqlRounds.push(new Map((await measureDirect(db, scenarios, opts.warmup, opts.runs, log)).map((d) => [d.id, d])));
  }
  await server.stop();
  await floorServer.stop();

  const med = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const medSide = (xs: Side[]): Side => ({
    http: { ...xs[0]!.http, p50: med(xs.map((x) => x.http.p50)), p99: med(xs.map((x) => x.http.p99)) },
    load: { ...xs[0]!.load!, rps: med(xs.map((x) => x.load!.rps)), p50: med(xs.map((x) => x.load!.p50)), errors: xs.reduce((n, x) => n + x.load!.errors, 0) },
  });
  const results = scenarios.map((s) => {
    const ps = pairRounds.map((m) => m.get(s.id)!);
    const ds = sqlRounds.map((m) => m.get(s.id)!);
    const p50s = ps.map((h) => h.svc.http.p50);
    return {
      scenario: s,
      svc: medSide(ps.map((p) => p.svc)),
      floor: medSide(ps.map((p) => p.floor)),
      // Ratios per round (measured next to each other), then the median of the rounds.
      ratio: med(ps.map((p) => p.svc.http.p50 / p.floor.http.p50)),
      rpsRatio: med(ps.map((p) => p.svc.load!.rps / p.floor.load!.rps)),
      same: ps.map((p) => p.same).find((x) => x !== null) ?? null,
      sql: { ...ds[0]!, p50: med(ds.map((d) => d.p50)), p99: med(ds.map((d) => d.p99)) },
      httpCount: ps[0]!.count,
      sqlCount: ds[0]!.count,
      rows: ps[0]!.rows,
      p50Range: ps.length > 1 ? ([Math.min(...p50s), Math.max(...p50s)] as [number, number]) : undefined,
    };
  });

  const floorLines: string[] = [];
  const goalsMissed: string[] = [];
  floorLines.push(
    `| scenario | rows / total | same body | svc p50 / p99 ms | floor p50 / p99 ms | p50 ratio | svc req/s c=${opts.concurrency} | floor req/s c=${opts.concurrency} | req/s ratio | goal | verdict |`,
  );
  floorLines.push('|---|---|---|---:|---:|---:|---:|---:|---:|---|---|');
  for (const r of results) {
    const goal = floorGoal(r.scenario.target, r.svc.http.p50, r.floor.http.p50, r.ratio, r.rpsRatio);
    if (!goal.met) goalsMissed.push(r.scenario.name);
    const goalText =
      r.scenario.target === 'floor'
        ? '– (svc: through Next; floor: SELECT 1)'
        : r.scenario.target === 'byid'
          ? `p50 ≤ 1.3×; c=${opts.concurrency} ≥ 0.7×`
          : `p50 ≤ 1.3× or +0.3 ms; c=${opts.concurrency} ≥ 0.7×`;
    floorLines.push(
      `| ${r.scenario.name} | ${r.rows} / ${n0(r.httpCount)} | ${r.scenario.target === 'floor' ? '–' : r.same ? `**no**: ${r.same}` : 'yes'} | ${fmtMs(r.svc.http.p50)} / ${fmtMs(r.svc.http.p99)} | ${fmtMs(r.floor.http.p50)} / ${fmtMs(r.floor.http.p99)} | ${r.ratio.toFixed(2)}× | ${n0(r.svc.load!.rps)} | ${n0(r.floor.load!.rps)} | ${r.rpsRatio.toFixed(2)}× | ${goalText} | ${goal.text} |`,
    );
  }
  const mismatches = results.filter((r) => r.same);

  const lines: string[] = [];
  const missed: Scenario[] = [];
  lines.push(`| scenario | HTTP p50 ms | HTTP p99 ms | SQL p50 ms | HTTP − SQL ms | req/s c=${opts.concurrency} (p50 ms) | target | result |`);
  lines.push('|---|---:|---:|---:|---:|---:|---|---|');
  for (const r of results) {
    const check = targetCheck(r.scenario.target, r.svc.http.p50, r.svc.load?.rps, TARGETS);
    if (!check.met) missed.push(r.scenario);
    const mismatch = r.sqlCount !== undefined && r.sqlCount !== r.httpCount ? ` (SQL count ${r.sqlCount}!)` : '';
    const range = r.p50Range ? ` (${fmtMs(r.p50Range[0])}–${fmtMs(r.p50Range[1])})` : '';
    lines.push(
      `| ${r.scenario.name}${mismatch} | ${fmtMs(r.svc.http.p50)}${range} | ${fmtMs(r.svc.http.p99)} | ${fmtMs(r.sql?.p50)} | ${fmtMs(r.sql ? r.svc.http.p50 - r.sql.p50 : undefined)} | ${r.svc.load ? `${n0(r.svc.load.rps)} (${fmtMs(r.svc.load.p50)})` : '–'} | ${TARGETS[r.scenario.target].label} | ${check.text} |`,
    );
  }
  const importLine = imp
    ? `Import (${imp.via}, wall clock incl. process start, validation, upsert and VACUUM ANALYZE): ${n0(imp.records)} records in ${imp.seconds.toFixed(1)} s = **${n0(imp.rps)} records/s**; target ≥ 50,000 records/s: ${imp.rps >= 50_000 ? 'met' : `**missed** (${(50_000 / imp.rps).toFixed(1)}× too slow; ${(imp.records / 50_000).toFixed(1)} s would meet it)`}${imp.cliReported ? ` (its own figure: ${imp.cliReported})` : ''}; other CPU load before it ${((imp.busyBefore ?? 0) * 100).toFixed(0)}%, 1-min load average after it ${imp.loadAfter?.toFixed(2)}.${importNote()}`
    : 'Import: not re-run (reused database).';

  let explain = '';
  const toExplain = argv['explain-all'] ? scenarios : missed;
  if (toExplain.length > 0) {
    log(`EXPLAIN (ANALYZE, BUFFERS) of ${toExplain.length} scenario(s)`);
    explain = await explainScenarios(db, toExplain, 'PostgreSQL');
    fs.mkdirSync(DATA, { recursive: true });
    fs.writeFileSync(path.join(DATA, 'explain-full.md'), explain);
  }

  const md = [
    header(`Customer API on PostgreSQL, ${n0(data?.responses ?? picks.totalResponses)} responses`, { pg, build, data, busy }),
    `- load average (1/5/15 min) before → after each round: ${loads.join('; ')}`,
    '',
    importLine,
    '',
    `### Against the floor (svc / floor, measured side by side)`,
    '',
    `The floor is tests/bench/floor-server.ts: raw \`node:http\` + postgres.js, one prepared (named) statement per request, no auth, on the same database at the same time. Per scenario the bench first checks that both answer the same JSON (three requests compared parsed), then times the two at c=1 one after the other and at c=${opts.concurrency} one after the other, alternating which goes first per round. Figures are medians of the rounds; ratios are svc ÷ floor per round, then the median.`,
    '',
    ...floorLines,
    '',
    `Goals against the floor: ${goalsMissed.length === 0 ? '**all met**' : `**missed** for ${goalsMissed.join('; ')}`}.${mismatches.length ? ` **Bodies differ** for ${mismatches.map((r) => r.scenario.name).join('; ')}: those ratios do not compare the same work.` : ' Both returned the same bodies for every scenario.'}`,
    '',
    `### Absolute targets (svc)`,
    '',
    ...lines,
    '',
    `Targets are checked against the HTTP p50 (what an integrator sees); the SQL column shows how much of it is the database (the same db/queries functions through drizzle from the bench process). The SQL count must agree with the API's \`count\`.`,
    ...(explain
      ? [
          '',
          `<details><summary>EXPLAIN (ANALYZE, BUFFERS) of the statements behind ${argv['explain-all'] ? 'every scenario' : 'the missed targets'}</summary>`,
          '',
          explain,
          '',
          '</details>',
        ]
      : []),
  ].join('\n');
  process.stdout.write(`\n${md}\n\n`);
  if (write) replaceSection('full', md);
  if (reuse) log(`kept database ${target.name} (reused; drop it with: psql -h 127.0.0.1 -U postgres -c 'DROP DATABASE ${target.name}')`);
  if (argv['keep-db'] && !reuse) log(`kept database ${target.name} (re-run: npm run bench:api -- --reuse-db ${target.name})`);
  if (mismatches.length > 0) throw new Error(`svc and the floor answered differently: ${mismatches.map((r) => `${r.scenario.name}: ${r.same}`).join('; ')}`);
}

async function compareMode() {
  const build = await ensureBuild();
  const data = await dataset();
  const pgTarget = await createPgDatabase('svc_bench_cmp');
  if (!argv['keep-db']) onCleanup(`database ${pgTarget.name}`, () => dropPgDatabase(pgTarget.name));
  const dataDir = fs.mkdtempSync(path.join(DATA, 'pglite-'));
  const liteTarget: DbTarget = { kind: 'pglite', dataDir };
  onCleanup('PGlite data dir', () => fs.rmSync(dataDir, { recursive: true, force: true }));

  const pgAcc = await setupAccount(pgTarget, data.file);
  const liteAcc = await setupAccount(liteTarget, data.file);
  if (!argv['keep-file']) {
    fs.rmSync(data.file, { force: true });
    fs.rmSync(`${data.file}.json`, { force: true });
  }
  const pg = await pgInfo(pgTarget.url);

  process.env.DATABASE_URL = pgTarget.url;
  delete process.env.DATA_DIR;
  const { getDb, closeDatabase } = await import('../../db/client');
  const { buildScenarios, lookupPicks, measureDirect } = await import('./scenarios');
  onCleanup('direct connection', () => closeDatabase());
  const db = await getDb();
  const pgPicks = await lookupPicks(db, pgAcc.accountId);
  const litePicks: Picks = { ...pgPicks, accountId: liteAcc.accountId };
  const pgScenarios = buildScenarios(pgPicks);
  const liteScenarios = buildScenarios(litePicks);

  let server = await startServer(pgTarget, 'postgres');
  const busy = await waitForQuiet();
  const pgHttp = await measureHttp(server, pgAcc.key, pgScenarios, false);
  await server.stop();
  const pgSql = new Map((await measureDirect(db, pgScenarios, opts.warmup, opts.runs, log)).map((d) => [d.id, d]));

  server = await startServer(liteTarget, 'pglite');
  const liteHttp = await measureHttp(server, liteAcc.key, liteScenarios, false);
  await server.stop();
  log('measuring SQL on PGlite through the driver (child process)');
  const spec = path.join(DATA, `direct-spec-${process.pid}.json`);
  const outFile = path.join(DATA, `direct-out-${process.pid}.json`);
  fs.writeFileSync(spec, JSON.stringify({ picks: litePicks, warmup: opts.warmup, runs: opts.runs }));
  onCleanup('worker files', () => {
    fs.rmSync(spec, { force: true });
    fs.rmSync(outFile, { force: true });
  });
  const w = spawnSync(TSX, ['tests/bench/direct-worker.ts', spec, outFile], {
    cwd: ROOT,
    env: baseEnv(liteTarget),
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 30 * 60_000,
  });
  if (w.status !== 0) throw new Error('the PGlite SQL worker failed');
  const liteSql = new Map((JSON.parse(fs.readFileSync(outFile, 'utf8')) as DirectResult[]).map((d) => [d.id, d]));

  const lines = [
    '| scenario | PostgreSQL HTTP p50 ms | PGlite HTTP p50 ms | ratio | PostgreSQL SQL p50 ms | PGlite SQL p50 ms | SQL ratio | within 3× |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  let worst = 0;
  for (const s of pgScenarios) {
    const a = pgHttp.get(s.id)!;
    const b = liteHttp.get(s.id)!;
    const sa = pgSql.get(s.id);
    const sb = liteSql.get(s.id);
    const ratio = b.http.p50 / a.http.p50;
    const sqlRatio = sa && sb ? sb.p50 / sa.p50 : NaN;
    worst = Math.max(worst, ratio);
    const counts = a.count !== b.count ? ` (count ${a.count} vs ${b.count}!)` : '';
    lines.push(
      `| ${s.name}${counts} | ${fmtMs(a.http.p50)} | ${fmtMs(b.http.p50)} | ${ratio.toFixed(2)}× | ${fmtMs(sa?.p50)} | ${fmtMs(sb?.p50)} | ${Number.isFinite(sqlRatio) ? `${sqlRatio.toFixed(2)}×` : '–'} | ${ratio <= 3 ? 'yes' : `**no** (${ratio.toFixed(1)}×)`} |`,
    );
  }
  const impLine = (label: string, i?: ImportStats) =>
    i ? `${label} ${n0(i.records)} records in ${i.seconds.toFixed(1)} s (${n0(i.rps)} records/s, ${i.via})` : '';
  const md = [
    header(`PGlite vs PostgreSQL, ${n0(data.responses)} responses`, { pg, build, data, busy }),
    `- import: ${impLine('PostgreSQL', pgAcc.imp)}; ${impLine('PGlite', liteAcc.imp)}${importNote().replace(/\n\n/, ' ')}`,
    '',
    ...lines,
    '',
    `Target: PGlite within 3× of PostgreSQL on every scenario (HTTP p50 at c=1). Worst ratio: ${worst.toFixed(2)}× — ${worst <= 3 ? 'met' : '**missed**'}.`,
  ].join('\n');
  process.stdout.write(`\n${md}\n\n`);
  if (write) replaceSection('pglite', md);
}

async function main() {
  log(
    `mode ${compare ? 'pglite-compare' : smoke ? 'smoke' : 'full'}: ${opts.conversations} conversations, ${opts.responses} responses; BENCHMARKS.md ${write ? 'will be written' : 'not written'}`,
  );
  if (compare) await compareMode();
  else await fullMode();
}

main().then(
  async () => {
    await cleanupAll();
    log('done');
    process.exit(0);
  },
  async (e) => {
    log(`FAILED: ${(e as Error).stack ?? e}`);
    await cleanupAll();
    process.exit(1);
  },
);
