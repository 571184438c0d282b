/**
 * Runs the admin CLI as a child process and reads the database state around it.
 *
 * PGlite is single-process: a CLI test file gets its own DATA_DIR (useCliDatabase), and this
 * process only opens it between CLI runs (inDb closes it again). Under TEST_DB=postgres the CLI
 * and this process share the run's DATABASE_URL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { closeDatabase, getDb, rows, type Db } from '../../db/client';
import { newDataDir } from './data-dir';

export const testDbKind: 'pglite' | 'postgres' = process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';

export type CliResult = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number };

/**
 * Points this process (and every CLI it starts) at a database no server holds. Call at the top
 * of a test file, before anything opens the database.
 */
export function useCliDatabase(): { dataDir?: string; cleanup: () => Promise<void> } {
  if (testDbKind === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('TEST_DB=postgres needs DATABASE_URL');
    return { cleanup: () => closeDatabase() };
  }
  delete process.env.DATABASE_URL;
  const dataDir = newDataDir('svc-cli-test-');
  process.env.DATA_DIR = dataDir;
  return {
    dataDir,
    cleanup: async () => {
      await closeDatabase();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The environment of a CLI child: this process's database, nothing of a server's. */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  delete env.SVC_ENV;
  if (testDbKind === 'pglite') delete env.DATABASE_URL;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Starts `node --import tsx lib/cli/main.ts …` as ONE process (no tsx wrapper), so a kill reaches it. */
export function spawnCli(args: string[], extraEnv: Record<string, string | undefined> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], {
    cwd: process.cwd(),
    env: cliEnv(extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A CLI that outlives `timeoutMs` is killed, so a hanging command fails its test instead of the run. */
export function runCli(args: string[], extraEnv: Record<string, string | undefined> = {}, timeoutMs = 60_000): Promise<CliResult> {
  const started = Date.now();
  const child = spawnCli(args, extraEnv);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const timer = setTimeout(() => {
    stderr += `\n[test] CLI still running after ${timeoutMs} ms: killed`;
    child.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** The one JSON object a successful command prints; fails the test with the CLI's stderr otherwise. */
export function parseSuccess(r: CliResult): Record<string, unknown> {
  if (r.code !== 0) throw new Error(`CLI exited ${r.code} (${r.signal ?? 'no signal'}) after ${r.ms} ms: ${r.stderr}`);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  if (lines.length !== 1 || !r.stdout.endsWith('\n')) {
    throw new Error(`expected exactly one stdout line, got ${JSON.stringify(r.stdout)} (exit 0 after ${r.ms} ms; stderr ${JSON.stringify(r.stderr)})`);
  }
  const value = JSON.parse(lines[0]!) as unknown;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`not a JSON object: ${lines[0]}`);
  return value as Record<string, unknown>;
}

/**
 * Runs fn with this process's database handle, then (PGlite) closes it so a CLI can open the
 * directory. Under PostgreSQL the handle stays open.
 */
export async function inDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await getDb();
  try {
    return await fn(db);
  } finally {
    if (testDbKind === 'pglite') await closeDatabase();
  }
}

/** The tables an import writes; the account row (with its counters) is always in a snapshot. */
export const RECORD_TABLES = ['channels', 'conversations', 'responses'] as const;
const ACCOUNT_TABLES = [...RECORD_TABLES, 'api_keys', 'admin_users'] as const;

/**
 * Every stored row of one account, as JSON text in a stable order: equal snapshots mean nothing
 * of that account changed (ids, counters, timestamps, message ids). Pass RECORD_TABLES when the
 * account's API key is in use meanwhile (its last_used_at may be written at any time).
 */
export async function snapshotAccount(
  db: Db,
  accountId: number,
  tables: readonly (typeof ACCOUNT_TABLES)[number][] = ACCOUNT_TABLES,
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  const account = await rows<{ j: string }>(db, sql`SELECT row_to_json(t)::text AS j FROM accounts t WHERE id = ${accountId}`);
  out.accounts = account.map((r) => r.j);
  for (const table of tables) {
    const key = table === 'api_keys' ? 'key_id' : 'id';
    const found = await rows<{ j: string }>(
      db,
      sql`
      SELECT row_to_json(t)::text AS j FROM ${sql.identifier(table)} t
      WHERE account_id = ${accountId} ORDER BY ${sql.identifier(key)}`,
    );
    out[table] = found.map((r) => r.j);
  }
  return out;
}

/** Row counts of every table the CLI writes, service-wide. */
export async function countAll(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['accounts', ...ACCOUNT_TABLES]) {
    const [r] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)}`);
    out[table] = r!.n;
  }
  return out;
}

/** A pid that certainly belongs to no running process (a child that has exited). */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  const pid = child.pid!;
  await new Promise((resolve) => child.on('exit', resolve));
  return pid;
}

/** How far a process has read into a file (Linux /proc), or null when it has no such fd open. */
export function readPosition(pid: number, filePath: string): number | null {
  const target = fs.realpathSync(filePath);
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  for (const fd of fds) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) !== target) continue;
      const m = /^pos:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'));
      if (m) return Number(m[1]);
    } catch {
      /* fd closed meanwhile */
    }
  }
  return null;
}

/** Folders made by tempFile, removed when the test process exits (they used to stay in /tmp). */
const tempDirs: string[] = [];
process.once('exit', () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

export function tempFile(name: string, content: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-file-'));
  tempDirs.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}
