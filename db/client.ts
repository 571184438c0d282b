import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { AppError } from '../lib/api/errors';
import { getEnv } from '../lib/env';
import * as schema from './schema';

/** The database handle every query takes. Both drivers share this type. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export type Database = {
  db: Db;
  kind: 'pglite' | 'postgres';
  close: () => Promise<void>;
};

const HANDLE = Symbol.for('svc.database');
type Holder = { [HANDLE]?: Promise<Database> };

/**
 * One database per process. server.ts and the route handlers Next bundles get separate module
 * copies, so the handle lives on globalThis; otherwise PGlite would be opened twice.
 */
export function getDatabase(): Promise<Database> {
  const holder = globalThis as Holder;
  if (!holder[HANDLE]) {
    const opening = openDatabase();
    holder[HANDLE] = opening;
    opening.catch(() => { if (holder[HANDLE] === opening) delete holder[HANDLE]; });
  }
  return holder[HANDLE]!;
}

export async function getDb(): Promise<Db> {
  return (await getDatabase()).db;
}

export async function closeDatabase(): Promise<void> {
  const holder = globalThis as Holder;
  const current = holder[HANDLE];
  delete holder[HANDLE];
  if (current) await (await current).close();
}

/** Runs raw SQL and returns its rows, whichever driver is underneath. */
export async function rows<T>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown;
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** This process's connections in pg_stat_activity: `svc <host> <pid>` (the metrics read them). */
export function poolApplicationName(): string {
  return `svc ${os.hostname()} ${process.pid}`.slice(0, 63);
}

export function migrationsFolder(): string {
  return path.join(process.cwd(), 'db', 'migrations');
}

async function openDatabase(): Promise<Database> {
  const env = getEnv();
  if (env.DATABASE_URL) {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    const client = postgres(env.DATABASE_URL, {
      max: env.DATABASE_POOL_SIZE,
      onnotice: () => {},
      connect_timeout: 10,
      connection: { application_name: poolApplicationName() },
    });
    const db = drizzle(client, { schema });
    try {
      await migrate(db, { migrationsFolder: migrationsFolder() });
    } catch (e) {
      await client.end({ timeout: 1 }).catch(() => {});
      throw e;
    }
    return { db: db as unknown as Db, kind: 'postgres', close: () => client.end({ timeout: 5 }) };
  }

  const dataDir = path.resolve(env.DATA_DIR);
  const release = acquireDataDirLock(dataDir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    const client = await PGlite.create(path.join(dataDir, 'pgdata'), { extensions: { pg_trgm } });
    const db = drizzle(client, { schema });
    await migrate(db, { migrationsFolder: migrationsFolder() });
    return {
      db: db as unknown as Db,
      kind: 'pglite',
      close: async () => { try { await client.close(); } finally { release(); } },
    };
  } catch (e) {
    release();
    throw e;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite takes no lock of its own and two processes on one directory corrupt it, so the data
 * directory carries a pid lock file. A live owner means a clear, immediate refusal.
 */
export function acquireDataDirLock(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, 'svc.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        process.off('exit', release);
        try {
          if (fs.readFileSync(lockPath, 'utf8') === String(process.pid)) fs.unlinkSync(lockPath);
        } catch { /* already gone */ }
      };
      process.on('exit', release);
      return release;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number.parseInt(fs.readFileSync(lockPath, 'utf8'), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new AppError('database_busy',
          `The embedded database in ${dataDir} is in use by process ${pid} (a running server?). ` +
          'Stop that process first, or set DATABASE_URL to use PostgreSQL, which allows several processes.');
      }
      if (pid === process.pid) {
        throw new AppError('database_busy', `The embedded database in ${dataDir} is already open in this process.`);
      }
      fs.rmSync(lockPath, { force: true }); // stale lock of a dead process
    }
  }
  throw new AppError('database_busy', `Could not lock the embedded database in ${dataDir}.`);
}
