/**
 * `npm run bench:import`: the CLI `import` of the deterministic dataset (tests/bench/dataset.ts)
 * into a fresh PostgreSQL database (and, with --pglite, a fresh PGlite DATA_DIR), timed by wall
 * clock from process start to exit (migrations, parsing, staging, checks, upserts, counters,
 * statistics). Also times the same file into an account that already holds a copy of it in
 * another account (indexes already large), the common case of a second customer migrating.
 * Before each target's first import, its floor (tests/bench/import-floor.ts): the same file COPYed
 * into bare tables of the same shape on the same server (or PGlite build), in a database of its
 * own, and the same indexes built afterwards; the first import is reported as a multiple of the
 * floor's time (--no-floor skips it).
 *
 * usage: tsx tests/bench/import-bench.ts [--conversations 100000] [--responses 1000000]
 *        [--pglite] [--pg-url postgres://postgres@127.0.0.1:5432/postgres] [--keep-file]
 *        [--accounts 2] (1: only the first customer, into empty tables; halves the run) [--no-floor]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { generateDataset } from './dataset';

const { values: argv } = parseArgs({
  options: {
    conversations: { type: 'string', default: '100000' },
    responses: { type: 'string', default: '1000000' },
    pglite: { type: 'boolean', default: false },
    'pg-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'keep-file': { type: 'boolean', default: false },
    accounts: { type: 'string', default: '2' },
    'no-floor': { type: 'boolean', default: false },
  },
});
const C = Number(argv.conversations);
const R = Number(argv.responses);
const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);

function run(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], {
      env: { ...process.env, ...env, SVC_DEMO: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      process.stderr.write(`  | ${d}`);
    });
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: Number(process.hrtime.bigint() - started) / 1e9 }));
  });
}

async function cliJson(args: string[], env: Record<string, string | undefined>) {
  const r = await run(args, env);
  if (r.code !== 0) throw new Error(`cli ${args.join(' ')} failed: ${r.stderr}`);
  return { json: JSON.parse(r.stdout) as Record<string, number>, seconds: r.seconds };
}

async function importInto(label: string, env: Record<string, string | undefined>, files: string[], floorRate: number | null) {
  const results: string[] = [];
  const accounts = Number(argv.accounts);
  if (accounts !== 1 && accounts !== 2) throw new Error('--accounts must be 1 or 2');
  for (let i = 0; i < accounts; i++) {
    const file = files[i]!;
    const acct = await cliJson(
      ['account', 'create', '--name', `Bench ${i}`, '--admin-email', `bench${i}-${Date.now()}@example.test`, '--admin-password', 'benchmark-password'],
      env,
    );
    const imp = await cliJson(['import', '--account', String(acct.json.account_id), '--file', file], env);
    const records = imp.json.conversations! + imp.json.responses!;
    const line = `${label}, account ${i + 1} (${i === 0 ? 'empty tables' : 'tables already holding one copy'}): ${records.toLocaleString('en')} records in ${imp.seconds.toFixed(1)} s = ${Math.round(records / imp.seconds).toLocaleString('en')} records/s`;
    const vsFloor = i === 0 && floorRate ? `; ${(floorRate / (records / imp.seconds)).toFixed(1)}× the floor's time` : '';
    log(line + vsFloor);
    results.push(line + vsFloor);
  }
  return results;
}

type FloorResult = {
  records: number;
  convertSeconds: number;
  copyConversations: number;
  copyResponses: number;
  indexSeconds: number;
  totalSeconds: number;
  recordsPerSecond: number;
  builds: Array<{ index: string; seconds: number }>;
};

/** The floor on a database of its own (fresh, migrated by the floor process), same server. */
async function floorOf(label: string, env: Record<string, string | undefined>, file: string): Promise<{ line: string; rate: number }> {
  const started = process.hrtime.bigint();
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/bench/import-floor.ts', file], {
      env: { ...process.env, ...env, SVC_DEMO: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`import-floor exited ${code}`))));
  });
  const f = JSON.parse(out) as FloorResult;
  const gin = f.builds.filter((b) => /trgm/.test(b.index)).reduce((s, b) => s + b.seconds, 0);
  const line =
    `${label} floor (COPY into bare tables of the same shape, then the same ${f.builds.length} indexes built): ` +
    `${f.records.toLocaleString('en')} records in ${f.totalSeconds.toFixed(1)} s = ${f.recordsPerSecond.toLocaleString('en')} records/s ` +
    `(COPY conversations ${f.copyConversations.toFixed(1)} s, responses ${f.copyResponses.toFixed(1)} s; indexes ${f.indexSeconds.toFixed(1)} s, ` +
    `of which trigram GIN ${gin.toFixed(1)} s; file to COPY text ${f.convertSeconds.toFixed(1)} s untimed; process ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s)`;
  log(line);
  for (const b of [...f.builds].sort((a, b) => b.seconds - a.seconds)) log(`  ${b.index}: ${b.seconds.toFixed(2)} s`);
  return { line, rate: f.recordsPerSecond };
}

async function main() {
  const dir = path.join(process.cwd(), 'bench-data');
  fs.mkdirSync(dir, { recursive: true });
  // Two files of the same shape with different ids (seeds): two customers migrating.
  const files = [42, 43].slice(0, Number(argv.accounts)).map((seed) => path.join(dir, `import-${C}-${R}-${seed}.ndjson`));
  for (const [i, file] of files.entries()) {
    if (fs.existsSync(file)) continue;
    log(`generating ${file}`);
    await generateDataset(file, { conversations: C, responses: R, seed: 42 + i });
  }
  const lines: string[] = [
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load before ${os.loadavg()[0]!.toFixed(2)}; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  ];

  const floor = !argv['no-floor'];
  const admin = postgres(argv['pg-url']!, { max: 1, onnotice: () => {} });
  const name = `svc_bench_import_${Date.now()}`;
  const urlOf = (db: string) => {
    const u = new URL(argv['pg-url']!);
    u.pathname = `/${db}`;
    return u.toString();
  };
  try {
    let floorRate: number | null = null;
    if (floor) {
      await admin.unsafe(`CREATE DATABASE ${name}_floor`);
      const f = await floorOf('PostgreSQL', { DATABASE_URL: urlOf(`${name}_floor`) }, files[0]!);
      lines.push(f.line);
      floorRate = f.rate;
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name}_floor WITH (FORCE)`);
    }
    await admin.unsafe(`CREATE DATABASE ${name}`);
    lines.push(...(await importInto('PostgreSQL', { DATABASE_URL: urlOf(name) }, files, floorRate)));
  } finally {
    for (const db of [name, `${name}_floor`]) await admin.unsafe(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
  if (argv.pglite) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-import-'));
    const floorDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-import-floor-'));
    try {
      let floorRate: number | null = null;
      if (floor) {
        const f = await floorOf('PGlite', { DATABASE_URL: '', DATA_DIR: floorDir }, files[0]!);
        lines.push(f.line);
        floorRate = f.rate;
        fs.rmSync(floorDir, { recursive: true, force: true });
      }
      lines.push(...(await importInto('PGlite', { DATABASE_URL: '', DATA_DIR: dataDir }, files, floorRate)));
    } finally {
      for (const d of [dataDir, floorDir]) fs.rmSync(d, { recursive: true, force: true });
    }
  }
  if (!argv['keep-file']) for (const f of files) fs.rmSync(f, { force: true });
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${(e as Error).message}`);
    process.exit(1);
  },
);
