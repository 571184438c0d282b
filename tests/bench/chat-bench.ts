/**
 * `npm run bench:chat` — widget realtime benchmark against ONE production server process.
 *
 *   1. memory: ramps idle `/widget` socket.io connections (websocket transport) to 1k, 5k, 10k and
 *      samples the server's /proc/<pid>/status (VmRSS, VmHWM, VmData) at each level;
 *      RSS per connection = (RSS at N − RSS at 0) / N. Heap comes from the server's --trace-gc lines.
 *      Tokens are fetched from a separate, earlier server process (same database, same signing
 *      keys) so issuing them does not inflate the measured server's baseline.
 *   2. latency: an open loop of 200 questions/s (built-in engine) over 200 connected sockets for
 *      20 s: ask → first `answer.delta` and ask → `answer.done` (client-side clocks), once with the
 *      idle connections still held and once with only the 200 askers, then askers-only sweeps at
 *      lower rates. Each run waits until the server and its database connections are idle again.
 *      Per run: GC pauses (--trace-gc), CPU per question of server / PostgreSQL / clients, CPU of
 *      everything else on the machine, a per-second timeline, and pg_stat_activity sampled every
 *      100 ms (what the server's pool connections were waiting on).
 *   3. diagnosis: a second server started with --heapsnapshot-signal; heap snapshots at 0 and at
 *      --diagnose-conns connections, after they disconnect, and after 500 answered questions,
 *      diffed by constructor (objects and bytes per connection / per answer).
 *
 * Setup goes through the admin CLI (account, widget client for `localhost`, one FAQ document),
 * tokens through POST /api/widget/token. Client sockets live in child processes
 * (chat-worker.ts). Writes tests/bench/chat-results.md (not with --smoke / --no-write); server
 * logs stay in the OS temp dir (their paths are printed).
 *
 * Options: --levels 1000,5000,10000 --rate 200 --duration 20 --warmup 3 --askers 200
 *   --sweep 50,100,150 (extra askers-only rates; '' for none) --sweep-duration 10
 *   --workers 2 (processes holding the idle sockets) --settle 10 (s before sampling a level)
 *   --token-pool N (distinct tokens for idle sockets; default one per socket)
 *   --pglite (fresh DATA_DIR instead of PostgreSQL) --pg-url URL --no-build --no-diagnose
 *   --diagnose-conns 2000 --smoke (100,500 connections, 5 s, 50 q/s; writes nothing)
 *   --write / --no-write --timeout-minutes 30
 *   --cpu-prof DIR (the measured server runs with node --cpu-prof; its profile is written to DIR when it stops)
 *
 * Everything on loopback; the script stops its servers and workers and drops its database, also
 * on failure, Ctrl-C or its own timeout. If the production build is missing it runs
 * `node scripts/build.mjs`; if another build is rewriting it, it waits (bounded).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { FAQ, QUESTIONS } from './chat-knowledge';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const WORKER = path.join(__dirname, 'chat-worker.ts');
const RESULTS = path.join(__dirname, 'chat-results.md');
const TARGET_KB_PER_CONN = 45;
const TARGET_FIRST_DELTA_P99_MS = 25;
const TARGET_CONNECTIONS = 10_000;

// ---------------------------------------------------------------------------------------------
// Options

const { values: argv } = parseArgs({
  options: {
    levels: { type: 'string' },
    rate: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    askers: { type: 'string' },
    workers: { type: 'string' },
    settle: { type: 'string' },
    'token-pool': { type: 'string' },
    pglite: { type: 'boolean' },
    'pg-url': { type: 'string' },
    'no-build': { type: 'boolean' },
    'no-diagnose': { type: 'boolean' },
    'diagnose-conns': { type: 'string' },
    smoke: { type: 'boolean' },
    write: { type: 'boolean' },
    'no-write': { type: 'boolean' },
    'timeout-minutes': { type: 'string' },
    sweep: { type: 'string' },
    'sweep-duration': { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
  strict: true,
});
const smoke = !!argv.smoke;
const num = (v: string | undefined, d: number, name: string) => {
  if (v === undefined) return d;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number`);
  return n;
};
const opts = {
  levels: (argv.levels ?? (smoke ? '100,500' : '1000,5000,10000'))
    .split(',')
    .map((s) => Math.floor(Number(s)))
    .filter((n) => n > 0)
    .sort((a, b) => a - b),
  rate: num(argv.rate, smoke ? 50 : 200, 'rate'),
  duration: num(argv.duration, smoke ? 5 : 20, 'duration'),
  warmup: num(argv.warmup, smoke ? 2 : 3, 'warmup'),
  askers: Math.max(1, Math.floor(num(argv.askers, smoke ? 50 : 200, 'askers'))),
  workers: Math.max(1, Math.floor(num(argv.workers, 2, 'workers'))),
  settle: num(argv.settle, smoke ? 2 : 10, 'settle'),
  tokenPool: argv['token-pool'] ? Math.max(1, Math.floor(Number(argv['token-pool']))) : undefined,
  diagnose: !argv['no-diagnose'],
  diagnoseConns: Math.floor(num(argv['diagnose-conns'], smoke ? 200 : 2000, 'diagnose-conns')),
  pgUrl: argv['pg-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  timeoutMinutes: num(argv['timeout-minutes'], 30, 'timeout-minutes'),
  pglite: !!argv.pglite,
  /** Extra askers-only runs at these rates, to find the rate the product sustains. */
  sweep: (argv.sweep ?? (smoke ? '' : '50,100,150'))
    .split(',')
    .map(Number)
    .filter((n) => n > 0),
  sweepDuration: num(argv['sweep-duration'], 10, 'sweep-duration'),
};
const write = !argv['no-write'] && (!!argv.write || !smoke);
if (opts.levels.length === 0) throw new Error('--levels needs at least one positive number');
if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(opts.pgUrl).hostname)) throw new Error('--pg-url must be a loopback address');
const TOKEN_RATE = '1000000';

// ---------------------------------------------------------------------------------------------
// Cleanup, logging, watchdog

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
  process.stderr.write(`[chat-bench ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${m}\n`);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Machine, /proc sampling

function machine() {
  const cpu = /model name\s*:\s*(.+)/.exec(fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1] ?? os.cpus()[0]?.model ?? '?';
  const nproc = spawnSync('nproc', { encoding: 'utf8' }).stdout?.trim() || String(os.availableParallelism());
  return { nproc, memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`, cpu: cpu.trim(), node: process.version, os: `${os.type()} ${os.release()}` };
}

type Status = { rssKb: number; hwmKb: number; dataKb: number; fds: number };
function procStatus(pid: number): Status {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  let fds = NaN;
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    /* gone */
  }
  return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM'), dataKb: kb('VmData'), fds };
}
/** Process CPU seconds (user + system). */
function procCpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
/** Machine-wide busy and total jiffies. */
function machineCpu(): { busy: number; total: number } {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}
/** CPU seconds of our PostgreSQL backends (their process title names the database). */
function pgBackendPids(dbName: string | undefined): number[] {
  if (!dbName) return [];
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').startsWith('postgres:') && fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(` ${dbName} `))
        out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}
const cpuOf = (pids: number[]) =>
  pids.reduce((a, p) => {
    try {
      return a + procCpuSeconds(p);
    } catch {
      return a;
    }
  }, 0);
function nofileLimit(pid: number): string {
  try {
    return (
      /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/
        .exec(fs.readFileSync(`/proc/${pid}/limits`, 'utf8'))
        ?.slice(1, 3)
        .join(' / ') ?? '?'
    );
  } catch {
    return '?';
  }
}

// ---------------------------------------------------------------------------------------------
// Database, CLI, build, server

type DbTarget = { kind: 'postgres'; url: string; name: string } | { kind: 'pglite'; dataDir: string };

function baseEnv(target: DbTarget): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', SVC_DEMO: '0' };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'NODE_ENV', 'LOG_REQUESTS', 'SVC_ENV', 'LLM_BASE_URL', 'NODE_OPTIONS']) delete env[k];
  if (target.kind === 'postgres') env.DATABASE_URL = target.url;
  else env.DATA_DIR = target.dataDir;
  return env;
}

async function createDatabase(): Promise<DbTarget> {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  if (opts.pglite) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `svc_chatbench_${stamp}_`));
    onCleanup('PGlite data dir', () => fs.rmSync(dataDir, { recursive: true, force: true }));
    log(`fresh PGlite DATA_DIR ${dataDir}`);
    return { kind: 'pglite', dataDir };
  }
  const name = `svc_chatbench_${stamp}_${process.pid}`;
  const admin = postgres(opts.pgUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  onCleanup(`database ${name}`, async () => {
    const a = postgres(opts.pgUrl, { max: 1, onnotice: () => {} });
    try {
      await a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      log(`dropped database ${name}`);
    } finally {
      await a.end({ timeout: 5 });
    }
  });
  const url = new URL(opts.pgUrl);
  url.pathname = `/${name}`;
  log(`created database ${name}`);
  return { kind: 'postgres', url: url.toString(), name };
}

async function pgVersion(target: DbTarget): Promise<string> {
  if (target.kind !== 'postgres') return 'PGlite';
  const c = postgres(target.url, { max: 1, onnotice: () => {} });
  try {
    const [v] = await c.unsafe<{ v: string }[]>('SELECT version() AS v');
    const [p] = await c.unsafe<{ s: string }[]>(`SELECT setting AS s FROM pg_settings WHERE name = 'max_connections'`);
    return `${v!.v.split(' on ')[0]} (max_connections ${p?.s})`;
  } finally {
    await c.end({ timeout: 5 });
  }
}

function cli(target: DbTarget, args: string[]): Record<string, unknown> {
  const r = spawnSync(TSX, ['lib/cli/main.ts', ...args], { cwd: ROOT, env: baseEnv(target), encoding: 'utf8', timeout: 5 * 60_000 });
  if (r.status !== 0) throw new Error(`cli ${args.slice(0, 3).join(' ')} failed (exit ${r.status}): ${(r.stderr ?? '').trim().slice(-2000)}`);
  return JSON.parse(r.stdout.trim()) as Record<string, unknown>;
}

/** Builds only when an output is missing (as the issue asks); says when the build is older than the sources. */
async function ensureBuild(): Promise<string> {
  const outputs = ['.next/BUILD_ID', 'dist/server.js'].map((f) => path.join(ROOT, f));
  if (outputs.some((f) => !fs.existsSync(f))) {
    if (argv['no-build']) throw new Error('no production build and --no-build');
    log('no production build: node scripts/build.mjs');
    const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], timeout: 15 * 60_000 });
    if (r.status === 0) return 'built for this run';
    // Typically "Another next build process is already running": wait for that one instead.
    log('the build failed; waiting in case another build of this checkout is running');
    await buildPresent();
    return 'built by another process during this run';
  }
  const built = Math.min(...outputs.map((f) => fs.statSync(f).mtimeMs));
  const newest = (p: string): number => {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      return 0;
    }
    if (!st.isDirectory()) return st.mtimeMs;
    return Math.max(
      0,
      ...fs
        .readdirSync(p)
        .filter((e) => e !== 'node_modules')
        .map((e) => newest(path.join(p, e))),
    );
  };
  const sources = Math.max(...['app', 'lib', 'db', 'server.ts'].map((f) => newest(path.join(ROOT, f))));
  const when = new Date(built).toISOString().replace('T', ' ').slice(0, 19);
  if (sources > built) log('WARNING: the production build is older than some sources (not rebuilt; run node scripts/build.mjs)');
  return sources > built ? `existing build from ${when} UTC (older than some sources)` : `existing build from ${when} UTC (up to date)`;
}

/** Someone else may be rebuilding in this checkout: wait (bounded) until both outputs exist and are 20 s old. */
async function buildPresent() {
  const outputs = ['.next/BUILD_ID', 'dist/server.js'].map((f) => path.join(ROOT, f));
  const deadline = Date.now() + 10 * 60_000;
  let said = false;
  for (;;) {
    const ok = outputs.every((f) => {
      try {
        return Date.now() - fs.statSync(f).mtimeMs > 20_000;
      } catch {
        return false;
      }
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the production build did not reappear within 10 minutes');
    if (!said) {
      log('the production build is missing or being rewritten (another build running?): waiting');
      said = true;
    }
    await sleep(2000);
  }
}

function gitState(): string {
  const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() || '?';
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'app', 'lib', 'db', 'server.ts'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim();
  return dirty
    ? `${head} + uncommitted changes in ${[...new Set(dirty.split('\n').map((l) => l.slice(3).split('/').slice(0, 2).join('/')))].join(', ')}`
    : head;
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

type Server = { url: string; pid: number; logFile: string; nofile: string; startedAt: number; stop: () => Promise<void> };

/** `bash -c 'ulimit -n …; exec node [flags] dist/server.js'` — so the pid is the server's. */
async function startServer(target: DbTarget, label: string, nodeFlags: string[], extraEnv: Record<string, string> = {}): Promise<Server> {
  await buildPresent();
  const port = await freePort();
  const logFile = path.join(os.tmpdir(), `svc-chatbench-server-${label}-${process.pid}.log`);
  const out = fs.openSync(logFile, 'w');
  const startedAt = Date.now();
  const child: ChildProcess = spawn(
    'bash',
    ['-c', 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"', 'bash', process.execPath, ...nodeFlags, 'dist/server.js'],
    {
      cwd: ROOT,
      stdio: ['ignore', out, out],
      env: {
        ...baseEnv(target),
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        TOKEN_RATE_PER_CLIENT_PER_MINUTE: TOKEN_RATE,
        TOKEN_RATE_PER_IP_PER_MINUTE: TOKEN_RATE,
        // Every asker shares one address: the per-address ask limit (300/min) would refuse the run.
        ASKS_PER_MINUTE_PER_ADDRESS: TOKEN_RATE,
        ASKS_PER_MINUTE_PER_VISITOR: TOKEN_RATE,
        ASKS_PER_MINUTE_PER_CLIENT: TOKEN_RATE,
        WIDGET_SOCKETS_PER_ADDRESS: TOKEN_RATE,
        ...extraEnv,
      },
    },
  );
  fs.closeSync(out);
  let exited = false;
  let stopping = false;
  const exitedP = new Promise<void>((r) =>
    child.once('exit', (code, signal) => {
      exited = true;
      if (!stopping)
        log(
          `WARNING: server ${label} (pid ${child.pid}) exited on its own or was stopped from outside (code ${code}, signal ${signal}); last log lines:\n${fs
            .readFileSync(logFile, 'utf8')
            .split('\n')
            .filter((l) => !/ ms: (Scavenge|Mark)/.test(l))
            .slice(-5)
            .join('\n')}`,
        );
      r();
    }),
  );
  const stop = async () => {
    if (exited) return;
    stopping = true;
    child.kill('SIGTERM');
    const t = new Promise<boolean>((r) => setTimeout(() => r(false), 15_000).unref());
    if (!(await Promise.race([exitedP.then(() => true), t]))) {
      child.kill('SIGKILL');
      await exitedP;
    }
  };
  const undo = onCleanup(`server ${label} (pid ${child.pid})`, stop);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (exited) throw new Error(`server exited during start; see ${logFile}:\n${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
    try {
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).status === 200) break;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`server did not answer /healthz within 180 s; see ${logFile}`);
    await sleep(250);
  }
  const nofile = nofileLimit(child.pid!);
  log(`server ${label} (pid ${child.pid}, open files soft/hard ${nofile}) listening on ${url}; log ${logFile}`);
  return {
    url,
    pid: child.pid!,
    logFile,
    nofile,
    startedAt,
    stop: async () => {
      await stop();
      undo();
    },
  };
}

/** Widget tokens from the integrator-backend endpoint, `concurrency` requests at a time. */
async function fetchTokens(url: string, clientId: string, secret: string, n: number, concurrency = 8) {
  const tokens: string[] = new Array(n);
  const errors: Record<string, number> = {};
  let next = 0;
  const started = Date.now();
  const lane = async () => {
    while (next < n) {
      const i = next++;
      for (let attempt = 0; ; attempt++) {
        try {
          const r = await fetch(`${url}/api/widget/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ client_id: clientId, client_secret: secret }),
            signal: AbortSignal.timeout(10_000),
          });
          const body = (await r.json()) as { access_token?: string };
          if (r.status !== 200 || !body.access_token) throw new Error(`HTTP ${r.status}`);
          tokens[i] = body.access_token;
          break;
        } catch (e) {
          const k = (e as Error).message;
          errors[k] = (errors[k] ?? 0) + 1;
          if (attempt >= 2) throw new Error(`token request failed 3 times: ${k}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (Date.now() - started) / 1000;
  return { tokens, seconds, perSecond: n / seconds, errors };
}

// ---------------------------------------------------------------------------------------------
// Workers

type Worker = {
  pid: number;
  child: ChildProcess;
  request: <T>(msg: object, reply: string, timeoutMs: number) => Promise<T>;
  stop: () => Promise<void>;
};

async function startWorker(label: string): Promise<Worker> {
  const child = spawn(
    'bash',
    ['-c', 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"', 'bash', process.execPath, '--import', 'tsx', WORKER],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  let exited = false;
  const exitedP = new Promise<void>((r) =>
    child.once('exit', () => {
      exited = true;
      r();
    }),
  );
  const waiters = new Map<string, (m: Record<string, unknown>) => void>();
  child.on('message', (m: Record<string, unknown>) => {
    const w = waiters.get(m.type as string);
    if (w) {
      waiters.delete(m.type as string);
      w(m);
    }
  });
  const request = <T>(msg: object | null, reply: string, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(reply);
        reject(new Error(`worker ${label}: no '${reply}' within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.set(reply, (m) => {
        clearTimeout(timer);
        resolve(m as T);
      });
      exitedP.then(() => {
        if (waiters.delete(reply)) {
          clearTimeout(timer);
          reject(new Error(`worker ${label} exited`));
        }
      });
      if (msg) child.send(msg);
    });
  const stop = async () => {
    if (exited) return;
    try {
      await request({ type: 'close' }, 'closed', 20_000);
    } catch {
      /* kill below */
    }
    const t = new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref());
    if (!(await Promise.race([exitedP.then(() => true), t]))) {
      child.kill('SIGKILL');
      await exitedP;
    }
  };
  const undo = onCleanup(`worker ${label} (pid ${child.pid})`, stop);
  const ready = await request<{ pid: number }>(null, 'ready', 60_000);
  return {
    pid: ready.pid,
    child,
    request,
    stop: async () => {
      await stop();
      undo();
    },
  };
}

type Connected = { ok: number; failed: number; errors: Record<string, number>; ms: number; holding: number };
type Asked = {
  sent: number;
  sentMeasured: number;
  sendSeconds: number;
  ack: number[];
  firstDelta: number[];
  firstDeltaSent: number[];
  startWall: number;
  done: number[];
  errors: Record<string, number>;
  timeouts: number;
  deltas: number;
  lagMaxMs: number;
  lagMeanMs: number;
  sockets: number;
};

// ---------------------------------------------------------------------------------------------
// Statistics

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
type Lat = { n: number; p50: number; p90: number; p99: number; max: number; mean: number };
/** Percentiles over `total` asks: an ask without the event (timeout, error) counts as +∞, not as missing. */
function lat(samples: number[], total = samples.length): Lat {
  const s = [...samples].sort((a, b) => a - b);
  for (let i = s.length; i < total; i++) s.push(Infinity);
  return {
    n: samples.length,
    p50: pct(s, 50),
    p90: pct(s, 90),
    p99: pct(s, 99),
    max: s[s.length - 1] ?? NaN,
    mean: samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length),
  };
}
const f1 = (n: number) => (n === Infinity ? '∞' : Number.isFinite(n) ? n.toFixed(1) : '–');
const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '–');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

/** Every GC pause of the server as [wall-clock ms, pause ms, kind]. */
function gcEvents(server: Server): Array<{ at: number; ms: number; full: boolean }> {
  const out: Array<{ at: number; ms: number; full: boolean }> = [];
  for (const m of fs
    .readFileSync(server.logFile, 'utf8')
    .matchAll(
      /\s(\d+) ms: (Scavenge|Mark-Compact|Mark-Compact \(reduce\)|Minor Mark-Compact|Mark-sweep)[^\n]*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/g,
    )) {
    out.push({ at: server.startedAt + Number(m[1]), ms: Number(m[3]), full: m[2] !== 'Scavenge' });
  }
  return out;
}

type Second = { second: number; asks: number; slow: number; maxMs: number; gcMs: number; gcMaxMs: number; gcs: number };
/** Per second of the measured run: asks sent, how many had their first delta later than the target, and the server's GC pauses. */
function timeline(asked: Asked, gcs: Array<{ at: number; ms: number }>, warmupS: number): Second[] {
  const out = new Map<number, Second>();
  const get = (sec: number) => {
    let x = out.get(sec);
    if (!x) {
      x = { second: sec, asks: 0, slow: 0, maxMs: 0, gcMs: 0, gcMaxMs: 0, gcs: 0 };
      out.set(sec, x);
    }
    return x;
  };
  asked.firstDelta.forEach((ms, i) => {
    const x = get(Math.floor(asked.firstDeltaSent[i]! / 1000) - warmupS);
    x.asks++;
    if (ms > TARGET_FIRST_DELTA_P99_MS) x.slow++;
    x.maxMs = Math.max(x.maxMs, ms);
  });
  for (const g of gcs) {
    const sec = Math.floor((g.at - asked.startWall) / 1000) - warmupS;
    if (!out.has(sec)) continue;
    const x = out.get(sec)!;
    x.gcMs += g.ms;
    x.gcs++;
    x.gcMaxMs = Math.max(x.gcMaxMs, g.ms);
  }
  return [...out.values()].filter((x) => x.second >= 0).sort((a, b) => a.second - b.second);
}

type GcPauses = { scavenges: number; scavengeMeanMs: number; scavengeMaxMs: number; fullGcs: number; fullMaxMs: number; pausedPct: number };
/** Pauses from the server's --trace-gc lines whose time stamp (ms since the isolate started) falls in [fromMs, toMs). */
function gcPauses(server: Server, fromWall: number, toWall: number): GcPauses {
  const from = fromWall - server.startedAt,
    to = toWall - server.startedAt;
  const sc: number[] = [],
    full: number[] = [];
  for (const m of fs
    .readFileSync(server.logFile, 'utf8')
    .matchAll(
      /\s(\d+) ms: (Scavenge|Mark-Compact|Mark-Compact \(reduce\)|Minor Mark-Compact|Mark-sweep)[^\n]*?MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/g,
    )) {
    const t = Number(m[1]);
    if (t < from || t >= to) continue;
    (m[2] === 'Scavenge' ? sc : full).push(Number(m[3]));
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    scavenges: sc.length,
    scavengeMeanMs: sum(sc) / Math.max(1, sc.length),
    scavengeMaxMs: Math.max(0, ...sc),
    fullGcs: full.length,
    fullMaxMs: Math.max(0, ...full),
    pausedPct: ((sum(sc) + sum(full)) / Math.max(1, to - from)) * 100,
  };
}

// ---------------------------------------------------------------------------------------------
// Heap from --trace-gc lines: "Mark-Compact 120.3 (150.2) -> 80.1 (118.0) MB"

type Gc = { kind: string; afterMb: number; committedMb: number };
function gcLines(logFile: string, fromByte: number): { last?: Gc; lastMarkCompact?: Gc; count: number; end: number } {
  const buf = fs.readFileSync(logFile);
  const text = buf.subarray(Math.min(fromByte, buf.length)).toString('utf8');
  let last: Gc | undefined,
    lastMarkCompact: Gc | undefined,
    count = 0;
  for (const m of text.matchAll(
    /(Scavenge|Mark-Compact|Mark-Compact \(reduce\)|Minor Mark-Compact|Mark-sweep)[^\n]*?([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/g,
  )) {
    const g = { kind: m[1]!, afterMb: Number(m[4]), committedMb: Number(m[5]) };
    count++;
    last = g;
    if (g.kind.startsWith('Mark-Compact')) lastMarkCompact = g;
  }
  return { last, lastMarkCompact, count, end: buf.length };
}

// ---------------------------------------------------------------------------------------------
// What the server's PostgreSQL connections are doing: pg_stat_activity every 100 ms

type PgProfile = { samples: number; avgConnections: number; avgBusy: number; rows: Array<{ what: string; avg: number }> };

function pgSampler(dbName: string | undefined): { stop: () => Promise<PgProfile | null> } {
  if (!dbName) return { stop: async () => null };
  const c = postgres(opts.pgUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'chatbench-sampler' } });
  const counts = new Map<string, number>();
  let samples = 0,
    conns = 0,
    busy = 0,
    running = true;
  const loop = (async () => {
    while (running) {
      try {
        const rowsNow = await c.unsafe<{ state: string | null; wt: string | null; we: string | null; q: string }[]>(
          `SELECT state, wait_event_type AS wt, wait_event AS we, left(query, 300) AS q
           FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND application_name LIKE 'svc %'`,
          [dbName],
        );
        samples++;
        conns += rowsNow.length;
        for (const r of rowsNow) {
          if (r.state === 'idle') continue;
          busy++;
          const q = r.q.replace(/\s+/g, ' ').trim().slice(0, 70);
          const key =
            r.state === 'active'
              ? `active, ${r.wt ? `waiting ${r.wt}:${r.we}` : 'on CPU'} — ${q}`
              : `${r.state} (waiting for the server's next statement) — last: ${q}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
      } catch {
        /* keep sampling */
      }
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await c.end({ timeout: 5 });
      const n = Math.max(1, samples);
      return {
        samples,
        avgConnections: conns / n,
        avgBusy: busy / n,
        rows: [...counts.entries()]
          .map(([what, k]) => ({ what, avg: k / n }))
          .sort((a, b) => b.avg - a.avg)
          .slice(0, 8),
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Knowledge: a few KB of FAQ text, and the questions asked

// FAQ and QUESTIONS: tests/bench/chat-knowledge.ts (shared with chat-scale.ts)

// ---------------------------------------------------------------------------------------------
// Heap snapshot diff

type HeapSummary = { nodes: number; bytes: number; groups: Map<string, { count: number; bytes: number }> };

function summarizeSnapshot(file: string): HeapSummary {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const width = fields.length;
  const iType = fields.indexOf('type'),
    iName = fields.indexOf('name'),
    iSize = fields.indexOf('self_size');
  const types = snap.snapshot.meta.node_types[0];
  const groups = new Map<string, { count: number; bytes: number }>();
  let bytes = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]!]!;
    const name = snap.strings[snap.nodes[i + iName]!] ?? '';
    const size = snap.nodes[i + iSize]!;
    let key: string;
    if (type === 'object') key = name.length > 60 ? `${name.slice(0, 57)}…` : name;
    else if (type === 'string' || type === 'concatenated string' || type === 'sliced string') key = '(string)';
    else if (type === 'closure') key = `(closure) ${name || 'anonymous'}`.slice(0, 60);
    else if (type === 'native') key = `(native) ${name}`.slice(0, 60);
    else key = `(${type})${type === 'hidden' || type === 'array' || type === 'object shape' ? ` ${name}`.slice(0, 50) : ''}`;
    const g = groups.get(key) ?? { count: 0, bytes: 0 };
    g.count++;
    g.bytes += size;
    groups.set(key, g);
    bytes += size;
  }
  return { nodes: snap.nodes.length / width, bytes, groups };
}

async function heapSnapshot(server: Server, dir: string, label: string): Promise<{ file: string; rssAfterKb: number }> {
  const before = new Set(fs.readdirSync(dir));
  process.kill(server.pid, 'SIGUSR2');
  const deadline = Date.now() + 180_000;
  let file: string | undefined;
  let lastSize = -1;
  let stableSince = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`heap snapshot ${label} not written within 180 s`);
    await sleep(500);
    file ??= fs.readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const size = fs.statSync(path.join(dir, file)).size;
    if (size !== lastSize) {
      lastSize = size;
      stableSince = Date.now();
      continue;
    }
    if (Date.now() - stableSince < 1500) continue;
    // The snapshot blocks the server's event loop; a health check answered means it is finished.
    try {
      if ((await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(30_000) })).status === 200) break;
    } catch {
      /* retry */
    }
  }
  await sleep(1000);
  const rssAfterKb = procStatus(server.pid).rssKb;
  lastSize = fs.statSync(path.join(dir, file!)).size;
  log(`heap snapshot ${label}: ${(lastSize / 2 ** 20).toFixed(0)} MiB file, server RSS after it ${(rssAfterKb / 1024).toFixed(1)} MB`);
  return { file: path.join(dir, file!), rssAfterKb };
}

// ---------------------------------------------------------------------------------------------
// Main

type Level = {
  label: string;
  target: number;
  holding: number;
  serverFds: number;
  rssMb: number;
  hwmMb: number;
  dataMb: number;
  perConnKb: number;
  connectSeconds: number;
  failed: number;
  errors: Record<string, number>;
  gc?: Gc;
  gcMarkCompact?: Gc;
};
type LatencyRun = {
  seconds: Second[];
  label: string;
  rate: number;
  duration: number;
  pg: PgProfile | null;
  drainS: number;
  gc: GcPauses;
  cpuMsPerAsk: { server: number; pg: number; clients: number };
  idle: number;
  asked: Asked;
  serverCpuPct: number;
  pgCpuPct: number;
  clientsCpuPct: number;
  otherCpuPct: number;
  machineCpuPct: number;
  load: string;
  rssMb: number;
};

async function connectLevel(workers: Worker[], url: string, tokens: string[], add: number, tokenOffset: number): Promise<Connected> {
  const share = workers.map((_, i) => Math.floor(add / workers.length) + (i < add % workers.length ? 1 : 0));
  let offset = tokenOffset;
  const parts: Connected[] = await Promise.all(
    workers.map((w, i): Promise<Connected> => {
      const slice = tokens.slice(offset % tokens.length).concat(tokens.slice(0, offset % tokens.length));
      offset += share[i]!;
      return share[i]! === 0
        ? Promise.resolve({ ok: 0, failed: 0, errors: {}, ms: 0, holding: 0 })
        : w.request<Connected>(
            { type: 'connect', url, tokens: slice.slice(0, Math.min(slice.length, share[i]!)), count: share[i]!, concurrency: 100, timeoutMs: 20_000 },
            'connected',
            15 * 60_000,
          );
    }),
  );
  const errors: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.errors)) errors[k] = (errors[k] ?? 0) + (v as number);
  return {
    ok: parts.reduce((a, p) => a + p.ok, 0),
    failed: parts.reduce((a, p) => a + p.failed, 0),
    errors,
    ms: Math.max(...parts.map((p) => p.ms)),
    holding: parts.reduce((a, p) => a + p.holding, 0),
  };
}

async function sampleLevel(server: Server, settleS: number): Promise<{ rssKb: number; hwmKb: number; dataKb: number; fds: number }> {
  await sleep(settleS * 1000);
  const samples: Status[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(procStatus(server.pid));
    await sleep(1000);
  }
  return {
    rssKb: median(samples.map((s) => s.rssKb)),
    hwmKb: Math.max(...samples.map((s) => s.hwmKb)),
    dataKb: median(samples.map((s) => s.dataKb)),
    fds: median(samples.map((s) => s.fds)),
  };
}

/** Waits (bounded) until the server has finished the answers still queued from the previous run. */
async function waitIdle(server: Server, dbName: string | undefined, maxS = 240): Promise<number> {
  const started = Date.now();
  const c = dbName ? postgres(opts.pgUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'chatbench-sampler' } }) : null;
  try {
    let quiet = 0;
    let cpu = procCpuSeconds(server.pid);
    while (Date.now() - started < maxS * 1000) {
      await sleep(500);
      const now = procCpuSeconds(server.pid);
      const busyCpu = (now - cpu) / 0.5 > 0.1;
      cpu = now;
      let busyDb = 0;
      if (c) {
        const [r] = await c.unsafe<{ n: number }[]>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'svc %' AND state <> 'idle'`,
          [dbName!],
        );
        busyDb = r?.n ?? 0;
      }
      quiet = !busyCpu && busyDb === 0 ? quiet + 1 : 0;
      if (quiet >= 4) return (Date.now() - started) / 1000 - 2;
    }
    log(`WARNING: the server was still busy ${maxS} s after the run`);
    return maxS;
  } finally {
    await c?.end({ timeout: 5 });
  }
}

async function latencyRun(
  label: string,
  server: Server,
  asker: Worker,
  clients: Worker[],
  dbName: string | undefined,
  idle: number,
  rate = opts.rate,
  duration = opts.duration,
): Promise<LatencyRun> {
  if (!fs.existsSync(`/proc/${server.pid}`)) throw new Error('the server is gone');
  const sampler = pgSampler(dbName);
  const pg0 = pgBackendPids(dbName),
    clientPids = clients.map((w) => w.pid);
  const cpu0 = procCpuSeconds(server.pid),
    pgc0 = cpuOf(pg0),
    cl0 = cpuOf(clientPids),
    m0 = machineCpu(),
    w0 = Date.now();
  const asked = await asker.request<Asked>(
    { type: 'ask', rate, warmupS: opts.warmup, durationS: duration, questions: QUESTIONS, timeoutMs: 15_000 },
    'asked',
    (opts.warmup + duration + 60) * 1000,
  );
  const pg = await sampler.stop();
  const pg1 = pgBackendPids(dbName);
  const cpu1 = procCpuSeconds(server.pid),
    pgc1 = cpuOf([...new Set([...pg0, ...pg1])]),
    cl1 = cpuOf(clientPids),
    m1 = machineCpu(),
    seconds = (Date.now() - w0) / 1000;
  const w1 = Date.now();
  const drainS = await waitIdle(server, dbName);
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const rssMb = procStatus(server.pid).rssKb / 1024;
  const pct1 = (cpuSeconds: number) => (cpuSeconds / seconds) * 100;
  const machinePct = ((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)) * 100 * os.availableParallelism();
  const serverCpuPct = pct1(cpu1 - cpu0),
    pgCpuPct = pct1(Math.max(0, pgc1 - pgc0)),
    clientsCpuPct = pct1(cl1 - cl0);
  const gc = gcPauses(server, w0, w1);
  const perAsk = (cpuSeconds: number) => (cpuSeconds * 1000) / Math.max(1, asked.sent);
  const cpuMsPerAsk = { server: perAsk(cpu1 - cpu0), pg: perAsk(Math.max(0, pgc1 - pgc0)), clients: perAsk(cl1 - cl0) };
  const perSecond = timeline(asked, gcEvents(server), opts.warmup);
  const r: LatencyRun = {
    seconds: perSecond,
    label,
    rate,
    duration,
    pg,
    drainS,
    gc,
    cpuMsPerAsk,
    idle,
    asked,
    serverCpuPct,
    pgCpuPct,
    clientsCpuPct,
    otherCpuPct: Math.max(0, machinePct - serverCpuPct - pgCpuPct - clientsCpuPct),
    machineCpuPct: machinePct,
    load,
    rssMb,
  };
  const fd = lat(asked.firstDelta, asked.sentMeasured),
    dn = lat(asked.done, asked.sentMeasured);
  log(
    `${label}: ${asked.sentMeasured} measured asks in ${asked.sendSeconds.toFixed(1)} s; first delta p50 ${f1(fd.p50)} p99 ${f1(fd.p99)} ms; done p50 ${f1(dn.p50)} p99 ${f1(dn.p99)} ms; errors ${JSON.stringify(asked.errors)} timeouts ${asked.timeouts}; server busy ${f0(drainS)} s after the client finished; CPU (% of one core): server ${f0(r.serverCpuPct)}, our postgres ${f0(r.pgCpuPct)}, bench clients ${f0(r.clientsCpuPct)}, other processes ${f0(r.otherCpuPct)}, machine ${f0(r.machineCpuPct)} of ${os.availableParallelism() * 100}`,
  );
  log(
    `  GC: ${gc.scavenges} scavenges (mean ${f1(gc.scavengeMeanMs)} ms, max ${f1(gc.scavengeMaxMs)} ms), ${gc.fullGcs} full (max ${f1(gc.fullMaxMs)} ms), paused ${f1(gc.pausedPct)}% of the run; CPU per ask: server ${f1(cpuMsPerAsk.server)} ms, postgres ${f1(cpuMsPerAsk.pg)} ms, clients ${f1(cpuMsPerAsk.clients)} ms`,
  );
  const worst = [...r.seconds].sort((a, b) => b.slow - a.slow).slice(0, 4);
  log(`  slowest seconds: ${worst.map((x) => `s${x.second}: ${x.slow}/${x.asks} slow, max ${f0(x.maxMs)} ms, GC ${f0(x.gcMs)} ms`).join('; ')}`);
  if (pg)
    log(
      `  pg: ${pg.avgBusy.toFixed(1)} of ${pg.avgConnections.toFixed(1)} connections busy; ${pg.rows
        .slice(0, 4)
        .map((x) => `${x.avg.toFixed(1)} × ${x.what}`)
        .join(' | ')}`,
    );
  return r;
}

async function main() {
  const info = machine();
  const date = new Date().toISOString();
  const loadBefore = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  log(`machine: ${info.nproc} CPUs (${info.cpu}), ${info.memory}, node ${info.node}; load ${loadBefore}`);
  const build = await ensureBuild();
  const git = gitState();
  const target = await createDatabase();

  // Setup through the CLI (for PGlite necessarily before the server opens the data dir).
  const faqFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chatbench-')), 'acme-faq.md');
  onCleanup('FAQ file', () => fs.rmSync(path.dirname(faqFile), { recursive: true, force: true }));
  fs.writeFileSync(faqFile, FAQ);
  const account = cli(target, [
    'account',
    'create',
    '--name',
    'chat bench',
    '--admin-email',
    `chatbench-${Date.now()}@example.com`,
    '--admin-password',
    'chat-bench-password-1',
  ]);
  const accountId = String(account.account_id ?? account.id);
  const client = cli(target, ['widget', 'client', 'create', '--account', accountId, '--domain', 'localhost']);
  const kb = cli(target, ['kb', 'add', '--account', accountId, '--file', faqFile]);
  log(`account ${accountId}, widget client ${client.client_id}, FAQ ${FAQ.length} bytes → ${kb.chunks} passages`);
  const database = await pgVersion(target);

  // Tokens come from a first server process (the signing keys live in the database, so the main
  // server accepts them): ten thousand token requests would otherwise grow the main server's heap
  // before the 0-connection baseline and hide part of the per-connection cost.
  const maxLevel = opts.levels[opts.levels.length - 1]!;
  const idleTokens = Math.min(maxLevel, opts.tokenPool ?? maxLevel);
  const tokenServer = await startServer(target, 'tokens', []);
  const tk = await fetchTokens(tokenServer.url, client.client_id as string, client.client_secret as string, idleTokens + opts.askers);
  await tokenServer.stop();
  log(
    `${tk.tokens.length} tokens in ${tk.seconds.toFixed(1)} s (${f0(tk.perSecond)}/s)${Object.keys(tk.errors).length ? ` retries: ${JSON.stringify(tk.errors)}` : ''}`,
  );
  const tokens = tk.tokens.slice(0, idleTokens),
    askerTokens = tk.tokens.slice(idleTokens);

  // Main server.
  const cpuProf = argv['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(argv['cpu-prof'])}`] : [];
  const server = await startServer(target, 'main', ['--trace-gc', ...cpuProf]);
  const idleWorkers: Worker[] = [];
  for (let i = 0; i < opts.workers; i++) idleWorkers.push(await startWorker(`idle-${i}`));
  const asker = await startWorker('asker');
  log(`${opts.workers} idle-socket worker(s) + 1 asker worker started`);
  // Warm-up, so lazily compiled code and first-use allocations are in the baseline: one token
  // request, then 20 sockets connected and closed.
  await fetchTokens(server.url, client.client_id as string, client.client_secret as string, 1, 1);
  const warm = await connectLevel([idleWorkers[0]!], server.url, tokens, 20, 0);
  await idleWorkers[0]!.request({ type: 'drop' }, 'dropped', 30_000);
  if (warm.failed) throw new Error(`warm-up connections failed: ${JSON.stringify(warm.errors)}`);

  // 1) Memory at 0, then each level.
  const levels: Level[] = [];
  const base = await sampleLevel(server, opts.settle);
  let gcFrom = gcLines(server.logFile, 0).end;
  const baseGc = gcLines(server.logFile, 0);
  levels.push({
    label: 'baseline',
    target: 0,
    holding: 0,
    serverFds: base.fds,
    rssMb: base.rssKb / 1024,
    hwmMb: base.hwmKb / 1024,
    dataMb: base.dataKb / 1024,
    perConnKb: NaN,
    connectSeconds: 0,
    failed: 0,
    errors: {},
    gc: baseGc.last,
    gcMarkCompact: baseGc.lastMarkCompact,
  });
  log(`0 connections: RSS ${(base.rssKb / 1024).toFixed(1)} MB, VmData ${(base.dataKb / 1024).toFixed(1)} MB, fds ${base.fds}`);
  let holding = 0;
  const allErrors: Record<string, number> = {};
  for (const n of opts.levels) {
    const c = await connectLevel(idleWorkers, server.url, tokens, n - holding, holding);
    holding += c.ok;
    for (const [k, v] of Object.entries(c.errors)) allErrors[k] = (allErrors[k] ?? 0) + v;
    log(
      `level ${n}: +${c.ok} in ${(c.ms / 1000).toFixed(1)} s (${f0(c.ok / Math.max(0.001, c.ms / 1000))}/s), failed ${c.failed}${c.failed ? ` ${JSON.stringify(c.errors)}` : ''}; holding ${holding}`,
    );
    const s = await sampleLevel(server, opts.settle);
    const g = gcLines(server.logFile, gcFrom);
    gcFrom = g.end;
    const perConnKb = holding > 0 ? (s.rssKb - base.rssKb) / holding : NaN;
    levels.push({
      label: `${n}`,
      target: n,
      holding,
      serverFds: s.fds,
      rssMb: s.rssKb / 1024,
      hwmMb: s.hwmKb / 1024,
      dataMb: s.dataKb / 1024,
      perConnKb,
      connectSeconds: c.ms / 1000,
      failed: c.failed,
      errors: c.errors,
      gc: g.last,
      gcMarkCompact: g.lastMarkCompact,
    });
    log(
      `level ${n}: RSS ${(s.rssKb / 1024).toFixed(1)} MB (${f1(perConnKb)} KB/conn), VmHWM ${(s.hwmKb / 1024).toFixed(1)} MB, VmData ${(s.dataKb / 1024).toFixed(1)} MB, server fds ${s.fds}${g.last ? `, last GC ${g.last.kind} → ${g.last.afterMb} MB heap` : ''}`,
    );
  }

  // 2) Latency: with the idle connections held, then alone.
  const ac = await connectLevel([asker], server.url, askerTokens, opts.askers, 0);
  if (ac.failed > 0) log(`asker sockets: ${ac.failed} failed ${JSON.stringify(ac.errors)}`);
  const runs: LatencyRun[] = [];
  const dbName = target.kind === 'postgres' ? target.name : undefined;
  runs.push(await latencyRun(`${opts.rate} q/s, ${holding} idle connections held`, server, asker, [asker, ...idleWorkers], dbName, holding));
  const closedInfo: Array<{ unexpectedDisconnects: number; disconnectReasons: Record<string, number> }> = [];
  for (const w of idleWorkers) {
    try {
      closedInfo.push(await w.request({ type: 'close' }, 'closed', 30_000));
    } catch (e) {
      log((e as Error).message);
    }
    await w.stop();
  }
  await sleep(3000);
  runs.push(await latencyRun(`${opts.rate} q/s, askers only`, server, asker, [asker], dbName, 0));
  for (const rate of opts.sweep) {
    await sleep(3000);
    runs.push(await latencyRun(`${rate} q/s, askers only (sweep)`, server, asker, [asker], dbName, 0, rate, opts.sweepDuration));
  }
  const afterRss = procStatus(server.pid);
  await asker.stop();
  const serverErrors = fs
    .readFileSync(server.logFile, 'utf8')
    .split('\n')
    .filter((l) => /error|failed|exception/i.test(l) && !/Mark-Compact|Scavenge/.test(l))
    .slice(0, 10);
  await server.stop();
  log('main server stopped');

  // 3) Heap diagnosis: what one connection costs, by constructor.
  let diagnosis: string[] = [];
  if (opts.diagnose) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chatbench-heap-'));
    onCleanup('heap snapshots', () => fs.rmSync(dir, { recursive: true, force: true }));
    const ds = await startServer(target, 'heap', ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${dir}`]);
    const w = await startWorker('heap');
    const dt = await fetchTokens(ds.url, client.client_id as string, client.client_secret as string, Math.min(opts.diagnoseConns, 1000));
    await sleep(2000);
    const s0 = await heapSnapshot(ds, dir, '0 connections');
    const dc = await connectLevel([w], ds.url, dt.tokens, opts.diagnoseConns, 0);
    await sleep(3000);
    const s1 = await heapSnapshot(ds, dir, `${dc.ok} connections`);
    const rssAtN = procStatus(ds.pid).rssKb;
    // Does anything stay behind when they disconnect?
    await w.request({ type: 'drop' }, 'dropped', 60_000);
    await sleep(3000);
    const s2 = await heapSnapshot(ds, dir, 'after they disconnected');
    // What answered questions keep in memory (conversation streams stay in the registry while recent).
    const answerSockets = 50,
      answerRate = 25,
      answerSeconds = 20;
    await connectLevel([w], ds.url, dt.tokens.slice(0, answerSockets), answerSockets, 0);
    const aq = await w.request<Asked>(
      { type: 'ask', rate: answerRate, warmupS: 0, durationS: answerSeconds, questions: QUESTIONS, timeoutMs: 15_000 },
      'asked',
      (answerSeconds + 60) * 1000,
    );
    await waitIdle(ds, target.kind === 'postgres' ? target.name : undefined);
    await w.request({ type: 'drop' }, 'dropped', 60_000);
    await sleep(3000);
    const s3 = await heapSnapshot(ds, dir, `after ${aq.done.length} answers on ${answerSockets} conversations`);
    await w.stop();
    await ds.stop();
    log('parsing heap snapshots');
    const read = (f: string) => {
      const h = summarizeSnapshot(f);
      fs.rmSync(f, { force: true });
      return h;
    };
    const h0 = read(s0.file),
      h1 = read(s1.file),
      h2 = read(s2.file),
      h3 = read(s3.file);
    const answers = Math.max(1, aq.done.length);
    const perAnswer = (h3.bytes - h2.bytes) / answers;
    const answerRows = [...h3.groups.entries()]
      .map(([k, g]) => {
        const b = h2.groups.get(k) ?? { count: 0, bytes: 0 };
        return { k, count: (g.count - b.count) / answers, bytes: (g.bytes - b.bytes) / answers };
      })
      .sort((a, b) => b.bytes - a.bytes);
    const n = Math.max(1, dc.ok);
    const rows = [...h1.groups.entries()]
      .map(([k, g]) => {
        const b = h0.groups.get(k) ?? { count: 0, bytes: 0 };
        return { k, count: (g.count - b.count) / n, bytes: (g.bytes - b.bytes) / n };
      })
      .sort((a, b) => b.bytes - a.bytes);
    const heapPerConn = (h1.bytes - h0.bytes) / n;
    diagnosis = [
      `Second server (same database) started with \`--heapsnapshot-signal=SIGUSR2\`; a snapshot (which runs a full GC first) at 0 and at ${dc.ok} idle connections (${dc.failed} failed).`,
      '',
      `- live JS heap: ${(h0.bytes / 2 ** 20).toFixed(1)} MB → ${(h1.bytes / 2 ** 20).toFixed(1)} MB = **${(heapPerConn / 1024).toFixed(1)} KB per connection** (${((h1.nodes - h0.nodes) / n).toFixed(0)} heap objects per connection)`,
      `- (RSS of this server is not comparable: writing a snapshot itself grows RSS, ${(s0.rssAfterKb / 1024).toFixed(0)} → ${(s1.rssAfterKb / 1024).toFixed(0)} → ${(rssAtN / 1024).toFixed(0)} MB.) What RSS holds beyond the live heap is V8 heap slack (free space between GCs, new-space semi-spaces) and off-heap memory (socket read buffers, Buffers' backing stores, malloc arenas); kernel socket buffers are not in RSS.`,
      '',
      `- after all ${dc.ok} disconnected: ${(h2.bytes / 2 ** 20).toFixed(1)} MB, i.e. **${((h2.bytes - h0.bytes) / n / 1024).toFixed(2)} KB per closed connection** still retained (${((h2.nodes - h0.nodes) / n).toFixed(1)} objects).`,
      `- then ${answerSockets} sockets asked ${aq.sent} questions (${answerRate}/s for ${answerSeconds} s, ${aq.done.length} answered) and disconnected: heap ${(h2.bytes / 2 ** 20).toFixed(1)} → ${(h3.bytes / 2 ** 20).toFixed(1)} MB = **${(perAnswer / 1024).toFixed(1)} KB retained per answered question** while its conversation stream stays in the in-process registry (largest: ${answerRows
        .slice(0, 5)
        .map((r) => `\`${r.k}\` ${(r.bytes / 1024).toFixed(1)} KB`)
        .join(', ')}).`,
      '',
      '| retained by | objects / conn | bytes / conn |',
      '|---|---:|---:|',
      ...rows.slice(0, 25).map((r) => `| \`${r.k.replace(/\|/g, '\\|')}\` | ${r.count.toFixed(2)} | ${r.bytes.toFixed(0)} |`),
    ];
    log(
      `heap: ${(h0.bytes / 2 ** 20).toFixed(1)} MB at 0, ${(h1.bytes / 2 ** 20).toFixed(1)} MB at ${dc.ok}, ${(h2.bytes / 2 ** 20).toFixed(1)} MB after they left, ${(h3.bytes / 2 ** 20).toFixed(1)} MB after ${aq.done.length} answers (${(perAnswer / 1024).toFixed(1)} KB/answer)`,
    );
    log(
      `heap per connection ${(heapPerConn / 1024).toFixed(1)} KB; top: ${rows
        .slice(0, 8)
        .map((r) => `${r.k} ${r.bytes.toFixed(0)} B`)
        .join(', ')}`,
    );
  }

  await cleanupAll();

  // Report.
  const top = levels[levels.length - 1]!;
  const tenK = levels.find((l) => l.target === TARGET_CONNECTIONS);
  const memJudgedOn = tenK ?? top;
  const connOk = !!tenK && tenK.holding >= TARGET_CONNECTIONS;
  const memOk = Number.isFinite(memJudgedOn.perConnKb) && memJudgedOn.perConnKb <= TARGET_KB_PER_CONN;
  const fdA = lat(runs[0]!.asked.firstDelta, runs[0]!.asked.sentMeasured),
    fdB = lat(runs[1]!.asked.firstDelta, runs[1]!.asked.sentMeasured);
  const latOk = fdA.p99 <= TARGET_FIRST_DELTA_P99_MS && fdB.p99 <= TARGET_FIRST_DELTA_P99_MS;
  const verdict = (ok: boolean) => (ok ? '**met**' : '**missed**');
  const md: string[] = [
    '# Widget realtime benchmark (`npm run bench:chat`)',
    '',
    `Date: ${date}. Machine: ${info.nproc} CPUs (${info.cpu}), ${info.memory} RAM, ${info.os}, Node ${info.node}. Load average before the run: ${loadBefore}.`,
    `Database: ${target.kind === 'postgres' ? `PostgreSQL — ${database}, fresh database on 127.0.0.1` : 'PGlite, fresh DATA_DIR'}. Code: ${git}. Build: ${build}.`,
    `Server: one \`node --trace-gc dist/server.js\` process, NODE_ENV=production, SVC_DEMO=0, DATABASE_POOL_SIZE default (10), built-in answer engine, open files soft/hard ${server.nofile}${/^65536/.test(server.nofile) ? '' : ' (`ulimit -n 65536` was refused here, so the hard limit is used)'}. ` +
      `Token rate limits raised for the run: TOKEN_RATE_PER_CLIENT_PER_MINUTE=TOKEN_RATE_PER_IP_PER_MINUTE=${TOKEN_RATE}; SOCKET_EVENTS_PER_10S left at its default.`,
    `Clients: socket.io-client ${require('socket.io-client/package.json').version} on loopback, transports ['websocket'], Origin http://localhost; ${opts.workers} processes hold the idle sockets, 1 process the ${opts.askers} asking sockets. ` +
      `${tk.tokens.length} distinct tokens (${idleTokens} for the idle sockets${idleTokens < maxLevel ? ', reused round-robin' : ', one per socket'}, ${opts.askers} for the askers) fetched via POST /api/widget/token at ${f0(tk.perSecond)}/s from a separate server process run before the main one (same database and signing keys), so token issuing does not grow the main server's heap before its baseline. ` +
      `All clients share the 2 CPUs with the server and PostgreSQL${/^[01]\./.test(loadBefore) ? '' : ' (and with other work on the machine: see the load averages)'}.`,
    '',
    '## Targets',
    '',
    '| target | result | verdict |',
    '|---|---|---|',
    `| ${TARGET_CONNECTIONS.toLocaleString('en')} concurrent connections in one process | ${tenK ? `${tenK.holding.toLocaleString('en')} held (${tenK.failed} failed)` : 'level not run'} | ${verdict(connOk)} |`,
    `| ≤ ${TARGET_KB_PER_CONN} KB RSS per connection | ${f1(memJudgedOn.perConnKb)} KB at ${memJudgedOn.holding.toLocaleString('en')} | ${verdict(memOk)}${memOk ? '' : ` by ${f1(memJudgedOn.perConnKb - TARGET_KB_PER_CONN)} KB (${f0((memJudgedOn.perConnKb / TARGET_KB_PER_CONN - 1) * 100)}%)`} |`,
    `| ask → first delta p99 ≤ ${TARGET_FIRST_DELTA_P99_MS} ms at ${opts.rate} q/s | ${f1(fdA.p99)} ms with ${runs[0]!.idle.toLocaleString('en')} idle connections; ${f1(fdB.p99)} ms askers only | ${verdict(latOk)}${latOk ? '' : ` by ${f1(Math.max(fdA.p99, fdB.p99) - TARGET_FIRST_DELTA_P99_MS)} ms`} |`,
    '',
    '## 1. Memory per idle connection',
    '',
    `Baseline = the main server after /healthz, one token request and 20 sockets opened and closed (warm code paths). RSS = median of 5 samples of VmRSS (1 s apart) taken ${opts.settle} s after the level was reached; RSS/conn = (RSS at N − RSS at 0) / N. Heap = the server's last \`--trace-gc\` line in that level's window (heap used after that GC, committed in brackets; a Mark-Compact is a full collection, a Scavenge only the young generation).`,
    '',
    '| level | connections | RSS MB | RSS/conn KB | VmHWM MB | VmData MB | heap after last GC MB | server fds | connect time s |',
    '|---|---:|---:|---:|---:|---:|---|---:|---:|',
    ...levels.map(
      (l) =>
        `| ${l.label} | ${l.holding.toLocaleString('en')}${l.failed ? ` (${l.failed} failed)` : ''} | ${f1(l.rssMb)} | ${f1(l.perConnKb)} | ${f1(l.hwmMb)} | ${f1(l.dataMb)} | ${l.gc ? `${l.gc.afterMb} (${l.gc.committedMb}) ${l.gc.kind}${l.gcMarkCompact && l.gcMarkCompact !== l.gc ? `; last Mark-Compact ${l.gcMarkCompact.afterMb} (${l.gcMarkCompact.committedMb})` : ''}` : 'no GC'} | ${l.serverFds} | ${l.label === 'baseline' ? '' : f1(l.connectSeconds)} |`,
    ),
    '',
    Object.keys(allErrors).length ? `Connection failures: ${JSON.stringify(allErrors)}.` : 'No connection failed.',
    `Unexpected disconnects of idle sockets while held: ${closedInfo.reduce((a, c) => a + c.unexpectedDisconnects, 0)}${closedInfo.some((c) => Object.keys(c.disconnectReasons).length) ? ` ${JSON.stringify(closedInfo.map((c) => c.disconnectReasons))}` : ''}.`,
    '',
    '## 2. Question latency (built-in engine)',
    '',
    `Open loop: ask i is sent at start + i/rate s by socket i mod ${opts.askers} (each socket keeps its conversation; a fresh client_message_id per ask), whatever the answers do; ${opts.warmup} s warm-up not counted, then ${opts.duration} s measured (sweep runs: ${opts.sweepDuration} s). ` +
      'Latency from the `ask` emit to the first `answer.delta` event / to `answer.done`, client clock; timeout 15 s (an ask whose event never came counts as ∞ in the percentiles). After each run the bench waits until the server and its database connections are idle ("server still busy after": the time the server needed to work off answers queued during the run, measured from the client\'s last timeout) before the next run starts. ' +
      `Questions: ${QUESTIONS.length} FAQ questions in turn (2 of them match nothing and get the "couldn't find" answer).`,
    '',
    '| run | asks | ack p50 / p99 ms | first delta p50 / p90 / p99 / max ms | done p50 / p90 / p99 / max ms | errors | timeouts | server still busy after s | send lag mean / max ms | CPU: server / our PostgreSQL / bench clients / other processes / machine (% of one core) | load avg after |',
    '|---|---:|---|---|---|---:|---:|---:|---|---|---|',
    ...runs.map((r) => {
      const a = lat(r.asked.ack, r.asked.sentMeasured),
        fd = lat(r.asked.firstDelta, r.asked.sentMeasured),
        dn = lat(r.asked.done, r.asked.sentMeasured);
      const errs = Object.values(r.asked.errors).reduce((x, y) => x + y, 0);
      return `| ${r.label} | ${r.asked.sentMeasured} in ${r.asked.sendSeconds.toFixed(1)} s | ${f1(a.p50)} / ${f1(a.p99)} | ${f1(fd.p50)} / ${f1(fd.p90)} / **${f1(fd.p99)}** / ${f1(fd.max)} | ${f1(dn.p50)} / ${f1(dn.p90)} / ${f1(dn.p99)} / ${f1(dn.max)} | ${errs}${errs ? ` ${JSON.stringify(r.asked.errors)}` : ''} | ${r.asked.timeouts} | ${f0(r.drainS)} | ${f1(r.asked.lagMeanMs)} / ${f1(r.asked.lagMaxMs)} | ${f0(r.serverCpuPct)} / ${f0(r.pgCpuPct)} / ${f0(r.clientsCpuPct)} / ${f0(r.otherCpuPct)} / ${f0(r.machineCpuPct)} of ${os.availableParallelism() * 100} | ${r.load} |`;
    }),
    '',
    `Deltas received: ${runs.map((r) => `${r.asked.deltas} (${f1(r.asked.deltas / Math.max(1, r.asked.sent))} per answer)`).join(', ')}. Server RSS after the latency runs: ${(afterRss.rssKb / 1024).toFixed(1)} MB (VmHWM ${(afterRss.hwmKb / 1024).toFixed(1)} MB). ` +
      `CPU = user+system time over the run's wall time from /proc (100 = one core busy; the machine has ${os.availableParallelism() * 100}); "other processes" = machine busy time minus the server, this run's PostgreSQL backends and the bench's client processes — work this benchmark did not start.`,
    serverErrors.length ? `\nServer log lines mentioning errors: \n\n\`\`\`\n${serverErrors.join('\n')}\n\`\`\`` : 'No errors in the server log.',
    '',
  ];
  md.push(
    '### Server GC pauses and CPU per question',
    '',
    "GC pauses from the server's `--trace-gc` lines during each run (a pause stops every delivery of the process); CPU per question = CPU seconds of each side over the run / asks sent in it (warm-up included). These two do not depend much on what else runs on the machine; the wall-clock latencies above do.",
    '',
    '| run | scavenges | scavenge mean / max ms | full GCs (max ms) | time paused | CPU ms per question: server / PostgreSQL / bench clients | at this rate that is (% of one core) |',
    '|---|---:|---|---|---:|---|---:|',
    ...runs.map(
      (r) =>
        `| ${r.label} | ${r.gc.scavenges} | ${f1(r.gc.scavengeMeanMs)} / ${f1(r.gc.scavengeMaxMs)} | ${r.gc.fullGcs} (${f1(r.gc.fullMaxMs)}) | ${f1(r.gc.pausedPct)}% | ${f1(r.cpuMsPerAsk.server)} / ${f1(r.cpuMsPerAsk.pg)} / ${f1(r.cpuMsPerAsk.clients)} | ${f0(((r.cpuMsPerAsk.server + r.cpuMsPerAsk.pg + r.cpuMsPerAsk.clients) * r.rate) / 10)} |`,
    ),
    '',
  );
  md.push(
    '### Where the slow first deltas were, second by second',
    '',
    `For each second of the measured part of the ${opts.rate} q/s runs: asks sent, how many got their first delta later than ${TARGET_FIRST_DELTA_P99_MS} ms, the slowest, and the server's GC pauses in that second (from --trace-gc; clock offset between the two processes < 0.1 s).`,
    '',
  );
  for (const r of runs.slice(0, 2)) {
    md.push(
      `**${r.label}**`,
      '',
      '| second | asks | first delta > target | slowest ms | GC pauses (n, total ms, max ms) |',
      '|---:|---:|---:|---:|---|',
      ...r.seconds.map((x) => `| ${x.second} | ${x.asks} | ${x.slow} | ${f1(x.maxMs)} | ${x.gcs}, ${f1(x.gcMs)}, ${f1(x.gcMaxMs)} |`),
      '',
    );
  }
  md.push(
    "### What the server's database connections were doing",
    '',
    'pg_stat_activity of this run\'s database sampled every 100 ms (application_name svc = the server\'s pool); average number of connections in each state per sample. "idle in transaction" = inside a transaction, waiting for the server process to send its next statement.',
    '',
  );
  for (const r of runs) {
    if (!r.pg) continue;
    md.push(
      `**${r.label}** — ${r.pg.samples} samples, ${r.pg.avgConnections.toFixed(1)} connections open, ${r.pg.avgBusy.toFixed(1)} busy on average:`,
      '',
      '| avg | state — statement |',
      '|---:|---|',
      ...r.pg.rows.map((x) => `| ${x.avg.toFixed(2)} | ${x.what.replace(/\|/g, '\\|')} |`),
      '',
    );
  }
  if (diagnosis.length) md.push('## 3. Heap diagnosis: what one idle connection retains', '', ...diagnosis, '');
  const text = md.join('\n');
  process.stdout.write(`${text}\n`);
  if (write) {
    fs.writeFileSync(RESULTS, text);
    log(`wrote ${path.relative(ROOT, RESULTS)}`);
  }
}

main().then(
  () => {
    clearTimeout(watchdog);
    process.exit(0);
  },
  async (e) => {
    log(`FAILED: ${(e as Error).stack ?? e}`);
    await cleanupAll();
    process.exit(1);
  },
);
