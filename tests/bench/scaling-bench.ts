/**
 * `npm run bench:scaling`: whether the bulk paths stay linear. For each size (conversations, 10
 * responses each) and each database (a fresh PostgreSQL database, a fresh PGlite DATA_DIR), one child
 * process imports the deterministic dataset (tests/bench/dataset.ts) through the CLI's service, timing
 * its phases (read and check, conversations, responses, counters), then a bulk status change of every
 * conversation and a bulk delete of the account's records, each one statement with the insights
 * triggers on. Prints seconds per phase and the ratio per doubling (goal: at most 2.5×).
 *
 * usage: tsx tests/bench/scaling-bench.ts [--sizes 10000,20000,40000] [--targets postgres,pglite]
 *        [--pg-url postgres://postgres@127.0.0.1:5432/postgres]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { generateDataset } from './dataset';

const PHASES = ['check', 'conversations', 'responses', 'counters', 'status', 'delete'] as const;
type Phase = (typeof PHASES)[number];
type Timing = Record<Phase, number>;

const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);

async function child(file: string): Promise<void> {
  const { getDb, closeDatabase } = await import('../../db/client');
  const { sql } = await import('drizzle-orm');
  const { createAccount } = await import('../../lib/accounts/service');
  const { importNdjsonFile } = await import('../../lib/imports/service');
  const db = await getDb();
  const acct = await createAccount({ name: 'Scaling', adminEmail: `scaling-${Date.now()}@example.test`, adminPassword: 'benchmark-password' });
  const accountId = acct.account_id;
  const marks: Array<[string, number]> = [];
  const started = performance.now();
  await importNdjsonFile(accountId, file, (p) => {
    if (p.message) marks.push([p.message, performance.now()]);
  });
  const at = (prefix: string) => marks.find(([m]) => m.startsWith(prefix))?.[1] ?? Number.NaN;
  const timing: Partial<Timing> = {
    check: (at('import: writing records') - started) / 1000,
    conversations: (at('import: writing responses') - at('import: writing conversations')) / 1000,
    responses: (at('import: writing counters') - at('import: writing responses')) / 1000,
    counters:
      ((Number.isNaN(at('import: refreshing statistics')) ? at('import: ') : at('import: refreshing statistics')) - at('import: writing counters')) / 1000,
  };
  const timed = async (f: () => Promise<unknown>) => {
    const t = performance.now();
    await f();
    return (performance.now() - t) / 1000;
  };
  timing.status = await timed(() => db.execute(sql`UPDATE conversations SET status = 'Closed', updated_at = now() WHERE account_id = ${accountId}`));
  timing.delete = await timed(() =>
    db.transaction(async (tx) => {
      await tx.execute(sql`DELETE FROM responses WHERE account_id = ${accountId}`);
      await tx.execute(sql`DELETE FROM conversation_messages WHERE conversation_id IN (SELECT id FROM conversations WHERE account_id = ${accountId})`);
      await tx.execute(sql`DELETE FROM conversations WHERE account_id = ${accountId}`);
    }),
  );
  await closeDatabase();
  process.stdout.write(`${JSON.stringify(timing)}\n`);
}

function runChild(file: string, env: Record<string, string>): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', 'tests/bench/scaling-bench.ts', '--child', file], {
      env: { ...process.env, ...env, SVC_DEMO: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
    });
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as Timing) : reject(new Error(`child exited ${code}`))));
  });
}

async function main() {
  const { values: argv } = parseArgs({
    options: {
      sizes: { type: 'string', default: '10000,20000,40000' },
      targets: { type: 'string', default: 'postgres,pglite' },
      'pg-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
      child: { type: 'string' },
    },
  });
  if (argv.child) return child(argv.child);
  const sizes = argv.sizes!.split(',').map(Number);
  const dir = path.join(process.cwd(), 'bench-data');
  fs.mkdirSync(dir, { recursive: true });
  const files = new Map<number, string>();
  for (const n of sizes) {
    const file = path.join(dir, `scaling-${n}.ndjson`);
    if (!fs.existsSync(file)) await generateDataset(file, { conversations: n, responses: n * 10, seed: 42 });
    files.set(n, file);
  }
  const lines = [
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start; ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
  ];
  let worst = 0;
  for (const target of argv.targets!.split(',')) {
    const results: Array<[number, Timing]> = [];
    for (const n of sizes) {
      let env: Record<string, string>;
      let cleanup: () => Promise<void>;
      if (target === 'postgres') {
        const name = `svc_bench_scaling_${Date.now()}`;
        const admin = postgres(argv['pg-url']!, { max: 1, onnotice: () => {} });
        await admin.unsafe(`CREATE DATABASE ${name}`);
        const u = new URL(argv['pg-url']!);
        u.pathname = `/${name}`;
        env = { DATABASE_URL: u.toString() };
        cleanup = async () => {
          await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          await admin.end();
        };
      } else {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-scaling-'));
        env = { DATABASE_URL: '', DATA_DIR: dataDir };
        cleanup = async () => fs.rmSync(dataDir, { recursive: true, force: true });
      }
      try {
        const t = await runChild(files.get(n)!, env);
        log(`${target} ${n}: ${PHASES.map((p) => `${p} ${t[p].toFixed(2)} s`).join(', ')}; load ${os.loadavg()[0]!.toFixed(2)}`);
        results.push([n, t]);
      } finally {
        await cleanup();
      }
    }
    for (const [i, [n, t]] of results.entries()) {
      const prev = results[i - 1]?.[1];
      const cells = PHASES.map((p) => {
        const ratio = prev ? t[p] / prev[p] : null;
        if (ratio !== null && p !== 'check') worst = Math.max(worst, ratio);
        return `${p} ${t[p].toFixed(2)} s${ratio === null ? '' : ` (×${ratio.toFixed(2)})`}`;
      });
      lines.push(`${target}, ${n.toLocaleString('en')} conversations + ${(n * 10).toLocaleString('en')} responses: ${cells.join(', ')}`);
    }
  }
  lines.push(
    `worst ratio per doubling (write phases): ×${worst.toFixed(2)} (goal ≤ ×2.5); load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at end`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    log(`failed: ${(e as Error).message}`);
    process.exit(1);
  },
);
