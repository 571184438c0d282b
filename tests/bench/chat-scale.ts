/**
 * `npm run bench:chat` — the cost of scaling out (issue 10 item 9). Three topologies, each started
 * fresh on its own fresh PostgreSQL database:
 *   one        1 instance
 *   two-local  2 instances that share nothing (no REDIS_URL); each serves its own widgets
 *   two-redis  2 instances on Redis (REDIS_URL, a prefix of this run)
 * For each: first idle widget sockets spread over the fresh instances (RSS per socket; then closed),
 * then ask → first `answer.delta` at rising rates (open loop, askers spread evenly over the
 * instances, windows repeated; medians of the windows), the highest rate held at p99 ≤ 100 ms,
 * CPU seconds per answer of the instances, the PostgreSQL backends of this database and the
 * redis-server process (all from /proc). Sockets live in child processes (chat-worker.ts).
 *
 * Options: --topologies one,two-local,two-redis --rates 50,100,150,200,300,400 --repeats 3
 *   --duration 8 --warmup 2 --askers 100 --idle 10000 --pg-url URL --redis-url URL --smoke
 *   --out FILE (markdown; default tests/bench/chat-scale-results.md; --smoke writes nothing)
 *   --cpu-prof DIR (instances write V8 CPU profiles there when they stop; for profiling, not for figures)
 *   --logs DIR (each instance's stdout and stderr, written there when it stops)
 * A topology may be listed more than once (two-local,two-redis,two-local,two-redis): the runs
 * alternate, so a load change on the shared machine hits both sides alike.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { removeInstance, startInstance, type Instance } from '../helpers/instances';
import { FAQ, QUESTIONS } from './chat-knowledge';

const ROOT = path.resolve(__dirname, '..', '..');
const WORKER = path.join(__dirname, 'chat-worker.ts');

const { values: argv } = parseArgs({
  options: {
    topologies: { type: 'string' },
    rates: { type: 'string' },
    repeats: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    askers: { type: 'string' },
    idle: { type: 'string' },
    'pg-url': { type: 'string' },
    'redis-url': { type: 'string' },
    smoke: { type: 'boolean' },
    out: { type: 'string' },
    'cpu-prof': { type: 'string' },
    logs: { type: 'string' },
  },
  strict: true,
});
const smoke = !!argv.smoke;
const list = (v: string | undefined, d: string) =>
  (v ?? d)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const opts = {
  topologies: list(argv.topologies, 'one,two-local,two-redis') as Array<'one' | 'two-local' | 'two-redis'>,
  rates: list(argv.rates, smoke ? '50,100' : '50,100,150,200,300,400').map(Number),
  repeats: Number(argv.repeats ?? (smoke ? 1 : 3)),
  duration: Number(argv.duration ?? (smoke ? 3 : 8)),
  warmup: Number(argv.warmup ?? (smoke ? 1 : 2)),
  askers: Number(argv.askers ?? (smoke ? 20 : 100)),
  idle: Number(argv.idle ?? (smoke ? 200 : 10_000)),
  pgUrl: argv['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redisUrl: argv['redis-url'] ?? process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/6',
  out: argv.out ?? path.join(__dirname, 'chat-scale-results.md'),
  /** A directory: instances run with --cpu-prof and write their V8 CPU profiles there on exit. */
  cpuProf: argv['cpu-prof'] ? path.resolve(argv['cpu-prof']) : null,
  /** A directory: each instance's output (stdout, stderr) is written there when it stops. */
  logs: argv.logs ? path.resolve(argv.logs) : null,
};
const TARGET_P99_MS = 100;

const log = (m: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanups: Array<() => Promise<void> | void> = [];
async function cleanup() {
  for (const c of cleanups.splice(0).reverse()) {
    const started = Date.now();
    try {
      await c();
    } catch (e) {
      log(`cleanup: ${(e as Error).message}`);
    }
    if (Date.now() - started > 5000) log(`cleanup: a step took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}
/**
 * After the cleanup nothing of the benchmark is left to wait for. In rounds 7 and 8 the process
 * stayed alive after writing its results: each stopped instance left a 60 s timer
 * (Instance.stop, now cleared). Should anything else keep it alive, say what, and exit.
 */
function exitSoon() {
  setTimeout(() => {
    log(`still running 10 s after the cleanup; active resources: ${process.getActiveResourcesInfo().join(', ')}; exiting`);
    process.exit(process.exitCode ?? 0);
  }, 10_000).unref();
}
// Stopped from outside (Ctrl-C, kill): the instances, workers and databases go too. A SIGTERM used
// to leave the instances running on a dropped database, each busy at ~35 % of a core.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    void cleanup().then(() => process.exit(code));
  });
}

// /proc ----------------------------------------------------------------------------------------
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}
function rssKb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
}
function pidsWhere(test: (cmdline: string) => boolean): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return test(fs.readFileSync(`/proc/${e}/cmdline`, 'utf8'));
      } catch {
        return false;
      }
    })
    .map(Number);
}
const pgPids = (db: string) => pidsWhere((c) => c.startsWith('postgres:') && c.includes(` ${db} `));
const redisPids = () => pidsWhere((c) => c.startsWith('redis-server') || c.includes('/redis-server'));
const sumCpu = (pids: number[]) => pids.reduce((a, p) => a + cpuSeconds(p), 0);

/**
 * Redis `INFO commandstats` calls per command, and from `INFO stats` the socket reads and writes
 * redis-server processed (`(reads)`: writes of its clients, several pipelined commands in one;
 * `(writes)`: its replies and pub/sub deliveries). The whole server: other users add noise.
 */
function commandCalls(): Map<string, number> {
  const r = spawnSync('redis-cli', ['-u', opts.redisUrl, 'INFO', 'all'], { encoding: 'utf8', timeout: 10_000 });
  const calls = new Map<string, number>();
  for (const m of (r.stdout ?? '').matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  for (const m of (r.stdout ?? '').matchAll(/^total_(reads|writes)_processed:(\d+)/gm)) calls.set(`(${m[1]})`, Number(m[2]));
  return calls;
}

/**
 * `--cpu-prof` is not allowed in NODE_OPTIONS (Node 20) and the instances are started by the test
 * helper: a preload script starts V8's profiler through the inspector and writes the profile to
 * BENCH_CPU_PROF when the process exits (SIGTERM drains and exits 0).
 */
function profilerPreload(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'preload-profiler.cjs');
  fs.writeFileSync(
    file,
    `const inspector = require('node:inspector');
const fs = require('node:fs');
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 500 });
session.post('Profiler.start');
process.on('exit', () => {
  session.post('Profiler.stop', (err, r) => { if (!err) fs.writeFileSync(process.env.BENCH_CPU_PROF, JSON.stringify(r.profile)); });
});
`,
  );
  return file;
}
const stampNow = () => new Date().toISOString().replace(/\D/g, '').slice(8, 14);

// Workers (chat-worker.ts protocol) ------------------------------------------------------------
type Worker = { request: <T>(msg: object, reply: string, timeoutMs: number) => Promise<T>; stop: () => Promise<void> };
async function startWorker(): Promise<Worker> {
  const child: ChildProcess = spawn(
    'bash',
    ['-c', 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"', 'bash', process.execPath, '--import', 'tsx', WORKER],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } },
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
      const t = setTimeout(() => {
        waiters.delete(reply);
        reject(new Error(`worker: no '${reply}' within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.set(reply, (m) => {
        clearTimeout(t);
        resolve(m as T);
      });
      if (msg) child.send(msg);
    });
  const stop = async () => {
    if (child.exitCode !== null) return;
    try {
      await request({ type: 'close' }, 'closed', 10_000);
    } catch {
      child.kill('SIGKILL');
    }
  };
  cleanups.push(stop);
  await request(null, 'ready', 60_000);
  return { request, stop };
}
type Asked = { sentMeasured: number; firstDelta: number[]; done: number[]; errors: Record<string, number>; timeouts: number; deltas?: number };

// Statistics -----------------------------------------------------------------------------------
function pct(sorted: number[], p: number) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]! : NaN;
}
/** What went wrong in a window, by kind (for the log). */
function errorKinds(results: Asked[]): string {
  const kinds: Record<string, number> = {};
  for (const r of results) {
    if (r.timeouts) kinds.timeout = (kinds.timeout ?? 0) + r.timeouts;
    for (const [k, v] of Object.entries(r.errors)) kinds[k] = (kinds[k] ?? 0) + v;
  }
  const list = Object.entries(kinds)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([k, v]) => `${v}× ${k.slice(0, 60)}`);
  return list.length ? ` (${list.join('; ')})` : '';
}

/** Asks without a first delta (errors, timeouts) count as +∞. */
function p50p99(samples: number[], total: number) {
  const s = [...samples].sort((a, b) => a - b);
  while (s.length < total) s.push(Infinity);
  return { p50: pct(s, 50), p99: pct(s, 99) };
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};
const f1 = (n: number) => (n === Infinity ? '∞' : Number.isFinite(n) ? n.toFixed(1) : '–');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');

// Setup ----------------------------------------------------------------------------------------
function cli(env: NodeJS.ProcessEnv, args: string[]): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`cli ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

async function tokens(url: string, clientId: string, secret: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await fetch(`${url}/api/widget/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: clientId, client_secret: secret }),
    });
    if (r.status !== 200) throw new Error(`token: ${r.status} ${await r.text()}`);
    out.push(((await r.json()) as { access_token: string }).access_token);
  }
  return out;
}

type RateRow = {
  rate: number;
  windows: Array<{ p50: number; p99: number; cpuInst: number; cpuPg: number; cpuRedis: number; answers: number; errors: number }>;
  commands?: Map<string, number>;
  commandAnswers?: number;
};
type TopologyResult = {
  name: string;
  instances: number;
  redis: boolean;
  rows: RateRow[];
  held: number | null;
  heldAfterMiss: number | null;
  idle: { sockets: number; perSocketKb: number; rssBeforeMb: number[]; rssAfterMb: number[]; failed: number } | null;
};

async function runTopology(
  name: 'one' | 'two-local' | 'two-redis',
  dbUrl: string,
  dbName: string,
  client: { id: string; secret: string },
  prefix: string,
): Promise<TopologyResult> {
  const n = name === 'one' ? 1 : 2;
  const redis = name === 'two-redis';
  log(`topology ${name}: starting ${n} instance(s)`);
  const instances: Instance[] = [];
  const stopAll = async () => {
    await Promise.all(
      instances.splice(0).map(async (i) => {
        await removeInstance(i, 'SIGTERM');
        if (opts.logs) fs.writeFileSync(path.join(opts.logs, `${name}-${i.name}-${stampNow()}.log`), `${i.stdout()}\n--- stderr ---\n${i.stderr()}`);
      }),
    );
  };
  cleanups.push(stopAll);
  for (let i = 0; i < n; i++) {
    instances.push(
      await startInstance(`instance-${i}`, {
        DATABASE_URL: dbUrl,
        ...(redis ? { REDIS_URL: opts.redisUrl, REDIS_PREFIX: prefix } : {}),
        ...(opts.cpuProf
          ? { NODE_OPTIONS: `--require ${profilerPreload(opts.cpuProf)}`, BENCH_CPU_PROF: path.join(opts.cpuProf, `${name}-${i}-${stampNow()}.cpuprofile`) }
          : {}),
        TOKEN_RATE_PER_CLIENT_PER_MINUTE: '10000000',
        TOKEN_RATE_PER_IP_PER_MINUTE: '10000000',
        SOCKET_EVENTS_PER_10S: '100000',
        TRUST_PROXY: '',
        // One load generator on one address: the per-address and per-visitor limits would refuse it.
        WIDGET_SOCKETS_PER_ADDRESS: '1000000',
        ASKS_PER_MINUTE_PER_ADDRESS: '10000000',
        ASKS_PER_MINUTE_PER_VISITOR: '10000000',
        ASKS_PER_MINUTE_PER_CLIENT: '10000000',
      }),
    );
  }
  // Idle sockets first, on fresh processes: after the load phases the heap holds their garbage,
  // and its collection during the measurement made RSS per socket meaningless (even negative).
  let idle: TopologyResult['idle'] = null;
  if (opts.idle > 0) {
    await sleep(2000);
    const before = instances.map((i) => rssKb(i.child!.pid!));
    const holders: Worker[] = [];
    let failed = 0;
    for (const inst of instances) {
      const w = await startWorker();
      holders.push(w);
      const toks = await tokens(inst.url, client.id, client.secret, 50);
      const c = await w.request<{ ok: number; failed: number }>(
        { type: 'connect', url: inst.url, tokens: toks, count: Math.round(opts.idle / instances.length), concurrency: 50, timeoutMs: 20_000 },
        'connected',
        15 * 60_000,
      );
      failed += c.failed;
    }
    await sleep(8000);
    const after = instances.map((i) => rssKb(i.child!.pid!));
    const held2 = opts.idle - failed;
    idle = {
      sockets: held2,
      failed,
      perSocketKb: (after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)) / Math.max(1, held2),
      rssBeforeMb: before.map((k) => k / 1024),
      rssAfterMb: after.map((k) => k / 1024),
    };
    log(`${name}: ${held2} idle sockets, ${f1(idle.perSocketKb)} KB RSS per socket`);
    for (const w of holders) await w.stop();
  }
  // One asker worker per instance (two for one instance, so the client side is the same size).
  const workers: Worker[] = [];
  const targets = n === 1 ? [instances[0]!, instances[0]!] : instances;
  for (const inst of targets) {
    const w = await startWorker();
    const toks = await tokens(inst.url, client.id, client.secret, Math.ceil(opts.askers / targets.length));
    const c = await w.request<{ ok: number; failed: number }>(
      { type: 'connect', url: inst.url, tokens: toks, count: toks.length, concurrency: 20, timeoutMs: 10_000 },
      'connected',
      120_000,
    );
    if (c.failed > 0) throw new Error(`${c.failed} askers could not connect`);
    workers.push(w);
  }
  // A discarded window first: fresh processes compile their hot paths (JIT) on the first answers.
  await Promise.all(
    workers.map((w) =>
      w.request<Asked>(
        { type: 'ask', rate: opts.rates[0]! / workers.length, warmupS: 0, durationS: opts.warmup + 2, questions: QUESTIONS, timeoutMs: 15_000 },
        'asked',
        60_000,
      ),
    ),
  );
  const rows: RateRow[] = [];
  for (const rate of opts.rates) {
    const row: RateRow = { rate, windows: [] };
    for (let rep = 0; rep < opts.repeats; rep++) {
      await sleep(1000);
      const pids = instances.map((i) => i.child!.pid!);
      const pg = pgPids(dbName);
      const rp = redisPids();
      const c0 = { inst: sumCpu(pids), pg: sumCpu(pg), redis: sumCpu(rp) };
      const k0 = redis ? commandCalls() : null;
      const results = await Promise.all(
        workers.map((w) =>
          w.request<Asked>(
            { type: 'ask', rate: rate / workers.length, warmupS: opts.warmup, durationS: opts.duration, questions: QUESTIONS, timeoutMs: 15_000 },
            'asked',
            (opts.duration + opts.warmup + 40) * 1000,
          ),
        ),
      );
      const c1 = { inst: sumCpu(pids), pg: sumCpu(pgPids(dbName).filter((p) => pg.includes(p))), redis: sumCpu(rp) };
      if (k0) {
        row.commands ??= new Map();
        for (const [cmd, n] of commandCalls()) row.commands.set(cmd, (row.commands.get(cmd) ?? 0) + n - (k0.get(cmd) ?? 0));
      }
      const first = results.flatMap((r) => r.firstDelta);
      const total = results.reduce((a, r) => a + r.sentMeasured, 0);
      const answers = results.reduce((a, r) => a + r.done.length, 0) || 1;
      const errors = results.reduce((a, r) => a + r.timeouts + Object.values(r.errors).reduce((x, y) => x + y, 0), 0);
      // CPU covers warm-up and drain too: divide by every answer of the window, warm-up included.
      const all = (answers * (opts.warmup + opts.duration)) / opts.duration;
      const w = {
        ...p50p99(first, total),
        cpuInst: ((c1.inst - c0.inst) / all) * 1000,
        cpuPg: ((c1.pg - c0.pg) / all) * 1000,
        cpuRedis: ((c1.redis - c0.redis) / all) * 1000,
        answers,
        errors,
      };
      row.windows.push(w);
      if (k0) row.commandAnswers = (row.commandAnswers ?? 0) + all;
      log(
        `${name} ${rate} q/s #${rep + 1}: first delta p50 ${f1(w.p50)} p99 ${f1(w.p99)} ms; CPU ms/answer inst ${f2(w.cpuInst)} pg ${f2(w.cpuPg)} redis ${f2(w.cpuRedis)}; errors ${errors}${errorKinds(results)}; deltas/answer ${f1(results.reduce((a, r) => a + (r.deltas ?? 0), 0) / all)}`,
      );
    }
    rows.push(row);
    if (row.commands) log(`${name} ${rate} q/s: Redis commands per answer ${commandsPerAnswer(row)}`);
    // Past the steady 150 q/s of the comparison, a rate far above the goal ends the sweep.
    if (rate >= 150 && median(row.windows.map((w) => w.p99)) > 4 * TARGET_P99_MS) {
      log(`${name}: p99 far above the goal at ${rate} q/s; higher rates skipped`);
      break;
    }
  }
  const { held, heldAfterMiss } = highestHeld(rows);
  for (const w of workers) await w.stop();

  await stopAll();
  return { name, instances: n, redis, rows, held, heldAfterMiss, idle };
}

/** Redis calls per answer over a rate's windows, the commands that matter (≥ 0.05 per answer). */
function commandsPerAnswer(row: RateRow): string {
  if (!row.commands || !row.commandAnswers) return '–';
  return [...row.commands]
    .map(([c, n]) => [c, n / row.commandAnswers!] as const)
    .filter(([c, x]) => x >= 0.05 && c !== 'info')
    .sort((a, b) => b[1] - a[1])
    .map(([c, x]) => `${c} ${x.toFixed(2)}`)
    .join(', ');
}

function report(results: TopologyResult[], meta: Record<string, string>): string {
  const lines: string[] = [];
  lines.push(`Machine: ${meta.machine}. Date: ${meta.date}. PostgreSQL: ${meta.pg}. Redis: ${meta.redis}.`, '');
  lines.push(
    `Sizes: ${opts.askers} asking sockets spread evenly over the instances, open-loop asks (built-in knowledge-base engine, ${QUESTIONS.length} FAQ questions), ${opts.warmup} s warm-up + ${opts.duration} s measured per window, ${opts.repeats} windows per rate; medians of the windows. Asks without a first delta count as +∞. CPU per answer = CPU seconds of the process group during the window ÷ answers of the window (warm-up included), from /proc/<pid>/stat; PostgreSQL = the backends of the topology's own fresh database; Redis = the whole redis-server process (shared with other users of the machine's Redis).`,
    '',
  );
  lines.push(
    '| topology | rate q/s | first delta p50 ms | p99 ms | instance CPU ms/answer | PostgreSQL | Redis | errors |',
    '|---|---|---|---|---|---|---|---|',
  );
  for (const r of results) {
    for (const row of r.rows) {
      const m = (k: 'p50' | 'p99' | 'cpuInst' | 'cpuPg' | 'cpuRedis') => median(row.windows.map((w) => w[k]));
      lines.push(
        `| ${r.name} | ${row.rate} | ${f1(m('p50'))} | ${f1(m('p99'))} | ${f2(m('cpuInst'))} | ${f2(m('cpuPg'))} | ${r.redis ? f2(m('cpuRedis')) : '–'} | ${row.windows.reduce((a, w) => a + w.errors, 0)} |`,
      );
    }
  }
  const withCommands = results.flatMap((r) => r.rows.filter((row) => row.commands).map((row) => `| ${r.name} | ${row.rate} | ${commandsPerAnswer(row)} |`));
  if (withCommands.length)
    lines.push(
      '',
      'Redis commands per answer (`INFO commandstats` over the windows, warm-up included; the whole server; `(reads)` and `(writes)`: socket reads and writes of redis-server from `INFO stats`):',
      '',
      '| topology | rate q/s | calls per answer |',
      '|---|---|---|',
      ...withCommands,
    );
  lines.push(
    '',
    '| topology | highest rate held at p99 ≤ 100 ms | idle sockets | RSS per idle socket | instance RSS before → after (MB) |',
    '|---|---|---|---|---|',
  );
  for (const r of results) {
    const held = `${r.held ?? 'none of the rates'}${r.heldAfterMiss ? ` (${r.heldAfterMiss} held again after a lower rate missed; not counted)` : ''}`;
    lines.push(
      `| ${r.name} | ${held} | ${r.idle ? `${r.idle.sockets}${r.idle.failed ? ` (${r.idle.failed} failed)` : ''}` : '–'} | ${r.idle ? `${f1(r.idle.perSocketKb)} KB` : '–'} | ${r.idle ? r.idle.rssBeforeMb.map((b, i) => `${b.toFixed(0)} → ${r.idle!.rssAfterMb[i]!.toFixed(0)}`).join(', ') : '–'} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The highest rate held at p99 ≤ TARGET_P99_MS with every lower rate of the sweep held too: a rate
 * that holds after a lower one missed is noise on one side or the other, so it is shown apart
 * (heldAfterMiss, the highest such rate) and not counted.
 */
function highestHeld(rows: RateRow[]): { held: number | null; heldAfterMiss: number | null } {
  let held: number | null = null;
  let heldAfterMiss: number | null = null;
  let missed = false;
  for (const row of [...rows].sort((a, b) => a.rate - b.rate)) {
    const ok = median(row.windows.map((w) => w.p99)) <= TARGET_P99_MS;
    if (!ok) missed = true;
    else if (missed) heldAfterMiss = row.rate;
    else held = row.rate;
  }
  return { held, heldAfterMiss };
}

type Setup = { dbUrl: string; dbName: string; client: { id: string; secret: string } };

/**
 * A fresh database with the bench's account, widget client and knowledge base. Each topology gets
 * its own: PostgreSQL's cost per answer grows as one database fills (run 6 saw 6.9 → 10.3 ms over
 * four topologies), which would charge every later topology for the earlier ones.
 */
async function freshDatabase(admin: postgres.Sql, stamp: string, n: number): Promise<Setup> {
  const dbName = `svc_chatscale_${stamp}_${process.pid}_${n}`;
  await admin.unsafe(`CREATE DATABASE ${dbName}`);
  cleanups.push(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
  });
  const url = new URL(opts.pgUrl);
  url.pathname = `/${dbName}`;
  const dbUrl = url.toString();
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: dbUrl, SVC_DEMO: '0' };
  delete env.REDIS_URL;
  const account = cli(env, [
    'account',
    'create',
    '--name',
    'Bench',
    '--admin-email',
    `bench-${stamp}-${n}@example.test`,
    '--admin-password',
    'bench password 123',
  ]);
  const client = cli(env, ['widget', 'client', 'create', '--account', String(account.account_id), '--domain', 'localhost']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chatscale-'));
  fs.writeFileSync(path.join(dir, 'faq.md'), FAQ);
  cli(env, ['kb', 'add', '--account', String(account.account_id), '--file', path.join(dir, 'faq.md')]);
  fs.rmSync(dir, { recursive: true, force: true });
  return { dbUrl, dbName, client: { id: String(client.client_id), secret: String(client.client_secret) } };
}

async function main() {
  if (!fs.existsSync(path.join(ROOT, '.next', 'BUILD_ID'))) throw new Error('no production build: run node scripts/build.mjs first');
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const admin = postgres(opts.pgUrl, { max: 1, onnotice: () => {} });
  cleanups.push(async () => {
    await admin.end({ timeout: 5 });
  });
  const prefix = `chatscale-${process.pid}:`;

  const [v] = await admin.unsafe<{ v: string }[]>('SELECT version() AS v');
  const redisVersion =
    spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
      .stdout.trim()
      .split(' ')
      .find((s) => s.startsWith('v='))
      ?.slice(2) ?? '?';
  const cpu = /model name\s*:\s*(.+)/.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? '?';
  const meta = {
    machine: `${os.availableParallelism()} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, load average at start ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (shared with other work)`,
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    pg: v!.v.split(' on ')[0]!,
    redis: `redis-server ${redisVersion}`,
  };
  const results: TopologyResult[] = [];
  for (const [i, t] of opts.topologies.entries()) {
    const setup = await freshDatabase(admin, stamp, i);
    results.push(await runTopology(t, setup.dbUrl, setup.dbName, setup.client, `${prefix}${i}:`));
  }
  const md = report(results, meta);
  process.stdout.write(md);
  if (!smoke) {
    fs.writeFileSync(opts.out, md);
    log(`wrote ${opts.out}`);
  }
}

main()
  .then(cleanup, async (e) => {
    log(`failed: ${(e as Error).stack ?? e}`);
    await cleanup();
    process.exitCode = 1;
  })
  .then(exitSoon);
