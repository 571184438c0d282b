import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { AppError } from '../lib/core/errors';
import { getEnv } from '../lib/env';
import { processSingleton, processSlot } from '../lib/core/process';
import { closeHostWatches, dialPrimary, hostWatch } from './hosts';
import * as schema from './schema';

/** The database handle every query takes. Both drivers share this type. */
export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

export type Database = {
  db: Db;
  kind: 'pglite' | 'postgres';
  close: () => Promise<void>;
};

const handle = processSlot<Promise<Database>>('svc.database');
const open = processSlot<Database>('svc.database.open');

/**
 * One database per process. server.ts and the route handlers Next bundles get separate module
 * copies, so the handle lives on globalThis; otherwise PGlite would be opened twice.
 */
export function getDatabase(): Promise<Database> {
  const current = handle.get();
  if (current) return current;
  const opening = openDatabase();
  handle.set(opening);
  opening.then(
    (d) => {
      if (handle.get() === opening) open.set(d);
    },
    () => {
      if (handle.get() === opening) handle.clear();
    },
  );
  return opening;
}

export async function getDb(): Promise<Db> {
  return (await getDatabase()).db;
}

/**
 * The handle without a promise once the database is open (null before: then await getDb()).
 * For the Customer API's hot reads, where each promise costs more under Next's async hooks.
 */
export function openDb(): Db | null {
  return open.get()?.db ?? null;
}

export async function closeDatabase(): Promise<void> {
  const current = handle.get();
  handle.clear();
  open.clear();
  if (current) await (await current).close();
}

/** Runs raw SQL and returns its rows, whichever driver is underneath. */
export async function rows<T>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown;
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** The driver under a drizzle handle (or transaction): postgres.js `Sql` or a PGlite instance/transaction. */
type DriverClient = {
  unsafe?: (query: string) => PromiseLike<unknown> & { writable(): Promise<NodeJS.WritableStream>; reject: (e: unknown) => void };
  query?: (query: string, params?: unknown[], options?: { blob?: Blob }) => Promise<unknown>;
};

/**
 * Bulk-loads `data`, rows in COPY text format, into `table (columns)`: postgres.js
 * `COPY … FROM STDIN` through its writable stream, PGlite `COPY … FROM '/dev/blob'`. Inside a
 * transaction, pass the transaction's handle. Identifiers are the caller's constants, never input.
 */
export async function copyFrom(db: Db, table: string, columns: readonly string[], data: string): Promise<void> {
  if (data.length === 0) return;
  const client = (db as unknown as { session: { client: DriverClient } }).session.client;
  const target = `${table} (${columns.join(', ')})`;
  if (client.unsafe) {
    const query = client.unsafe(`COPY ${target} FROM STDIN`);
    // postgres.js rejects the (already resolved) query when the server refuses the data after the
    // stream ended, and never finishes the stream: listen to that rejection too, or it hangs.
    const refused = new Promise<never>((_, reject) => {
      const original = query.reject;
      query.reject = (e: unknown) => {
        original(e);
        reject(e);
      };
    });
    refused.catch(() => {});
    const stream = await query.writable();
    const { finished } = await import('node:stream/promises');
    stream.end(data);
    await Promise.race([finished(stream), refused]);
    return;
  }
  await client.query!(`COPY ${target} FROM '/dev/blob'`, [], { blob: new Blob([data]) });
}

/** This process's connections in pg_stat_activity: `svc <host> <pid>` (the metrics read them). */
export function poolApplicationName(): string {
  return `svc ${os.hostname()} ${process.pid}`.slice(0, 63);
}

export function migrationsFolder(): string {
  return path.join(process.cwd(), 'db', 'migrations');
}

/** How long a new connection waits for a writable host before its query is refused `unavailable`. */
const PRIMARY_WAIT_MS = 10_000;

type DialTarget = { host: string[]; port: number[]; path?: string | false };

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * The pool's connections, dialled one at a time with a growing pause (to 2 s) after dials that
 * closed before PostgreSQL said a word. The driver redials such a connection at once while a
 * query waits: behind a door that accepts and closes (a container's port while the database in
 * it is down) that was a busy loop of thousands of connections a second.
 */
function pacedDial(dial?: () => Promise<net.Socket>) {
  let dead = 0;
  let notBefore = 0;
  let next = 0;
  // Dials waiting out a pause go at once when another one reached PostgreSQL.
  let reached = signal();
  return async (o: DialTarget): Promise<net.Socket> => {
    if (dead > 0) {
      const at = Math.max(Date.now(), notBefore);
      notBefore = at + Math.min(2000, 50 * 2 ** dead) * (0.5 + Math.random() / 2);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise((r) => {
          timer = setTimeout(r, at - Date.now());
        }),
        reached.promise,
      ]);
      clearTimeout(timer);
    }
    const i = next++ % o.host.length;
    const socket = dial ? await dial() : o.path ? net.connect(o.path) : net.connect(o.port[i] ?? o.port[0]!, o.host[i]);
    let answered = false;
    socket.once('data', () => {
      answered = true;
      if (dead === 0) return;
      dead = 0;
      notBefore = 0;
      reached.resolve();
      reached = signal();
    });
    socket.once('close', () => {
      if (!answered) dead = Math.min(dead + 1, 10);
    });
    return socket;
  };
}

const serving = processSlot<boolean>('svc.database.serving');

/** SQL statements and transactions this process has run: the per-answer cost check counts them (tests/api/answer-cost.test.ts). */
const counts = () =>
  processSingleton('svc.database.counts', (): { statements: number; transactions: number; log?: string[] } => ({ statements: 0, transactions: 0 }));
export function databaseCounts(): { statements: number; transactions: number } {
  const { statements, transactions } = counts();
  return { statements, transactions };
}
/** Keeps the text of every statement run from now on (a profile of a test's requests); stop with the returned function. */
export function recordStatements(): () => string[] {
  const log: string[] = [];
  counts().log = log;
  return () => {
    if (counts().log === log) counts().log = undefined;
    return log;
  };
}
function countStatement(query: string): void {
  const c = counts();
  c.statements++;
  c.log?.push(query);
}
// PostgreSQL: the driver's hook sees every round trip (prepared statements and BEGIN/COMMIT too); PGlite: drizzle's logger.
const countingLogger = { logQuery: countStatement };
function countTransactions(db: Db): Db {
  const begin = db.transaction.bind(db);
  db.transaction = ((...args: Parameters<typeof begin>) => {
    counts().transactions++;
    return begin(...args);
  }) as typeof begin;
  return db;
}

/**
 * Called by the server before it opens the database: its connections then carry
 * DATABASE_STATEMENT_TIMEOUT_MS as their `statement_timeout`, so no request holds a connection
 * unboundedly (an export raises it for its own statement). The CLI's jobs (import, vacuum) and the
 * migrations run without one. PostgreSQL only: PGlite runs in-process, one statement at a time.
 */
export function boundStatementTime(): void {
  serving.set(true);
}

/** The statement_timeout of the server's connections (null in the CLI and migrations). */
export function statementTimeoutMs(): number | null {
  return serving.get() === true ? getEnv().DATABASE_STATEMENT_TIMEOUT_MS : null;
}

async function openDatabase(): Promise<Database> {
  const env = getEnv();
  if (env.DATABASE_URL) {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    const options = { onnotice: () => {}, connect_timeout: 10 };
    const bounded = serving.get() === true;
    // Several hosts: connections go only to the one a probe found writable (db/hosts.ts).
    const watch = hostWatch(env.DATABASE_URL);
    const dial = watch ? () => dialPrimary(watch, PRIMARY_WAIT_MS) : () => undefined;
    const client = postgres(env.DATABASE_URL, {
      ...options,
      ...(env.DATABASE_COUNT_STATEMENTS ? { debug: (_c: number, query: string) => countStatement(query) } : {}),
      max: env.DATABASE_POOL_SIZE,
      // Pending writes wait for one probe while the database is away (lib/ops/database-away), so
      // reconnecting need not back off for the driver's default 20 s once it has returned.
      backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 2),
      ...({ socket: pacedDial(dial()) } as object), // a documented option its types leave out
      connection: {
        application_name: poolApplicationName(),
        ...(bounded ? { statement_timeout: env.DATABASE_STATEMENT_TIMEOUT_MS } : {}),
      },
    });
    const db = countTransactions(drizzle(client, { schema }) as unknown as Db);
    // Migrations may rewrite large tables: on the server they run on a connection of their own without the timeout.
    const migrator = bounded
      ? postgres(env.DATABASE_URL, {
          ...options,
          max: 1,
          ...({ socket: pacedDial(dial()) } as object),
          connection: { application_name: poolApplicationName() },
        })
      : client;
    try {
      // An instance started while no host takes writes waits for one rather than failing its migrations.
      await watch?.writable();
      await migrate(bounded ? drizzle(migrator, { schema }) : (db as never), { migrationsFolder: migrationsFolder() });
    } catch (e) {
      await client.end({ timeout: 1 }).catch(() => {});
      throw e;
    } finally {
      if (migrator !== client) await migrator.end({ timeout: 5 }).catch(() => {});
    }
    const close = async () => {
      await client.end({ timeout: 5 });
      await closeHostWatches();
    };
    return { db: db as unknown as Db, kind: 'postgres', close };
  }

  const dataDir = path.resolve(env.DATA_DIR);
  const release = await acquireDataDirLock(dataDir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    const client = await PGlite.create(path.join(dataDir, 'pgdata'), { extensions: { pg_trgm } });
    const db = countTransactions(drizzle(client, { schema, ...(env.DATABASE_COUNT_STATEMENTS ? { logger: countingLogger } : {}) }) as unknown as Db);
    await migrate(db as never, { migrationsFolder: migrationsFolder() });
    return {
      db: db as unknown as Db,
      kind: 'pglite',
      close: async () => {
        try {
          await client.close();
        } finally {
          release();
        }
      },
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

function heldLocks(): Set<string> {
  return processSingleton('svc.heldDataDirLocks', () => new Set<string>());
}

/** The owner's liveness socket: in the data directory (unix sockets allow ~100 bytes of path). */
export function lockSocketPath(dataDir: string): string {
  const inDir = path.join(dataDir, 'svc.lock.sock');
  if (Buffer.byteLength(inDir) < 100) return inDir;
  return path.join(os.tmpdir(), `svc-${createHash('sha256').update(dataDir).digest('hex').slice(0, 20)}.sock`);
}

/** 'alive' when something accepts on the socket, 'dead' when nobody listens, 'absent' when there is no socket. */
function probeSocket(sock: string): Promise<'alive' | 'dead' | 'absent'> {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    const done = (r: 'alive' | 'dead' | 'absent') => {
      clearTimeout(timer);
      c.destroy();
      resolve(r);
    };
    // A hung owner still owns the data: only a refused connection proves it is gone.
    const timer = setTimeout(() => done('alive'), 1000);
    c.once('connect', () => done('alive'));
    c.once('error', (e: NodeJS.ErrnoException) => done(e.code === 'ENOENT' ? 'absent' : 'dead'));
  });
}

async function ownerAlive(sock: string, pid: number): Promise<boolean> {
  const probe = await probeSocket(sock);
  if (probe !== 'absent') return probe === 'alive';
  // No socket: a process of another pid that is alive may be between writing the lock and
  // listening (or predate the socket); give it a moment. Our own pid without a socket is a previous
  // incarnation (a container restarted after kill -9 gets the same pid).
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !processAlive(pid)) return false;
  await new Promise((r) => setTimeout(r, 300));
  const again = await probeSocket(sock);
  return again === 'alive' || (again === 'absent' && processAlive(pid));
}

/**
 * PGlite takes no lock of its own and two processes on one directory corrupt it, so the data
 * directory carries a lock file naming the owner's pid, and the owner listens on a unix socket
 * beside it. Liveness is proved by connecting to that socket (a pid alone can be reused: after
 * kill -9 a restarted container's new process has the same pid). A live owner means a clear,
 * immediate refusal; a lock whose socket refuses connections is stale and taken over.
 */
export async function acquireDataDirLock(dataDir: string): Promise<() => void> {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, 'svc.lock');
  const sock = lockSocketPath(dataDir);
  if (heldLocks().has(lockPath)) {
    throw new AppError('database_busy', `The embedded database in ${dataDir} is already open in this process.`);
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number.parseInt(fs.readFileSync(lockPath, 'utf8'), 10);
      if (await ownerAlive(sock, pid)) {
        throw new AppError(
          'database_busy',
          `The embedded database in ${dataDir} is in use by process ${Number.isInteger(pid) ? pid : 'unknown'} (a running server?). ` +
            'Stop that process first, or set DATABASE_URL to use PostgreSQL, which allows several processes.',
        );
      }
      fs.rmSync(lockPath, { force: true }); // stale lock of a dead process
      continue;
    }
    fs.rmSync(sock, { force: true });
    const server = net.createServer((c) => c.destroy());
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(sock, () => resolve());
      });
    } catch (e) {
      fs.rmSync(lockPath, { force: true });
      throw e;
    }
    server.unref();
    heldLocks().add(lockPath);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.off('exit', release);
      heldLocks().delete(lockPath);
      server.close();
      try {
        if (fs.readFileSync(lockPath, 'utf8') === String(process.pid)) {
          fs.unlinkSync(lockPath);
          fs.rmSync(sock, { force: true });
        }
      } catch {
        /* already gone */
      }
    };
    process.on('exit', release);
    return release;
  }
  throw new AppError('database_busy', `Could not lock the embedded database in ${dataDir}.`);
}
