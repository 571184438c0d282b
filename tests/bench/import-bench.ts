/**
 * `npm run bench:import`: the CLI `import` of the deterministic dataset (tests/bench/dataset.ts)
 * into a fresh PostgreSQL database (and, with --pglite, a fresh PGlite DATA_DIR), timed by wall
 * clock from process start to exit (migrations, parsing, staging, checks, upserts, counters,
 * statistics). Also times the same file into an account that already holds a copy of it in
 * another account (indexes already large), the common case of a second customer migrating.
 *
 * usage: tsx tests/bench/import-bench.ts [--conversations 100000] [--responses 1000000]
 *        [--pglite] [--pg-url postgres://postgres@127.0.0.1:5432/postgres] [--keep-file]
 *        [--accounts 2] (1: only the first customer, into empty tables; halves the run)
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
    conversations: { type: 'string', default: '100000' }, responses: { type: 'string', default: '1000000' },
    pglite: { type: 'boolean', default: false }, 'pg-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'keep-file': { type: 'boolean', default: false }, accounts: { type: 'string', default: '2' },
  },
});
const C = Number(argv.conversations);
const R = Number(argv.responses);
const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);

function run(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], {
      env: { ...process.env, ...env, SVC_DEMO: '0' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = ''; let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; process.stderr.write(`  | ${d}`); });
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: Number(process.hrtime.bigint() - started) / 1e9 }));
  });
}

async function cliJson(args: string[], env: Record<string, string | undefined>) {
  const r = await run(args, env);
  if (r.code !== 0) throw new Error(`cli ${args.join(' ')} failed: ${r.stderr}`);
  return { json: JSON.parse(r.stdout) as Record<string, number>, seconds: r.seconds };
}

async function importInto(label: string, env: Record<string, string | undefined>, files: string[]) {
  const results: string[] = [];
  const accounts = Number(argv.accounts);
  if (accounts !== 1 && accounts !== 2) throw new Error('--accounts must be 1 or 2');
  for (let i = 0; i < accounts; i++) {
    const file = files[i]!;
    const acct = await cliJson(['account', 'create', '--name', `Bench ${i}`, '--admin-email', `bench${i}-${Date.now()}@example.test`, '--admin-password', 'benchmark-password'], env);
    const imp = await cliJson(['import', '--account', String(acct.json.account_id), '--file', file], env);
    const records = imp.json.conversations! + imp.json.responses!;
    const line = `${label}, account ${i + 1} (${i === 0 ? 'empty tables' : 'tables already holding one copy'}): ${records.toLocaleString('en')} records in ${imp.seconds.toFixed(1)} s = ${Math.round(records / imp.seconds).toLocaleString('en')} records/s`;
    log(line);
    results.push(line);
  }
  return results;
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
  const lines: string[] = [`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load before ${os.loadavg()[0]!.toFixed(2)}; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`];

  const admin = postgres(argv['pg-url']!, { max: 1, onnotice: () => {} });
  const name = `svc_bench_import_${Date.now()}`;
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(argv['pg-url']!); url.pathname = `/${name}`;
  try {
    lines.push(...await importInto('PostgreSQL', { DATABASE_URL: url.toString() }, files));
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
  if (argv.pglite) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-import-'));
    try {
      lines.push(...await importInto('PGlite', { DATABASE_URL: '', DATA_DIR: dataDir }, files));
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  if (!argv['keep-file']) for (const f of files) fs.rmSync(f, { force: true });
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(() => process.exit(0), (e) => { log(`failed: ${(e as Error).message}`); process.exit(1); });
