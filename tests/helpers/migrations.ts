/** A scratch database migrated step by step: upgrade tests fill it under an old schema, then migrate it to the latest. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrationsFolder, type Db } from '../../db/client';

type Journal = { entries: Array<{ idx: number; tag: string }> };
const journalOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'meta', '_journal.json'), 'utf8')) as Journal;

/** The index of the committed migration whose tag ends with `suffix`. */
export function migrationIndex(suffix: string): number {
  return journalOf(migrationsFolder()).entries.find((e) => e.tag.endsWith(suffix))!.idx;
}

/** Applies migrations [0, upTo) of the committed folder (a copy with a cut journal) to `db`. */
export function partialMigrations(upTo: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-mig-'));
  const src = migrationsFolder();
  const journal = journalOf(src);
  journal.entries = journal.entries.filter((e) => e.idx < upTo);
  fs.mkdirSync(path.join(dir, 'meta'));
  fs.writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify(journal));
  for (const e of journal.entries) fs.copyFileSync(path.join(src, `${e.tag}.sql`), path.join(dir, `${e.tag}.sql`));
  return dir;
}

export type ScratchDatabase = {
  db: Db;
  exec: (q: string) => Promise<Array<Record<string, unknown>>>;
  migrateTo: (folder: string) => Promise<void>;
  close: () => Promise<void>;
};

/** An empty database of the kind the tests run on: a new PostgreSQL database beside DATABASE_URL's, or an in-memory PGlite. */
export async function openScratchDatabase(kind: 'pglite' | 'postgres'): Promise<ScratchDatabase> {
  if (kind === 'postgres') {
    const { default: postgres } = await import('postgres');
    const { drizzle } = await import('drizzle-orm/postgres-js');
    const { migrate } = await import('drizzle-orm/postgres-js/migrator');
    const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    const name = `svc_mig_${Date.now()}_${process.pid}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.DATABASE_URL!);
    url.pathname = `/${name}`;
    const client = postgres(url.toString(), { max: 1, onnotice: () => {} });
    const db = drizzle(client);
    return {
      db: db as unknown as Db,
      exec: async (q) => [...(await client.unsafe(q))] as Array<Record<string, unknown>>,
      migrateTo: (folder) => migrate(db, { migrationsFolder: folder }),
      close: async () => {
        await client.end();
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  const client = await PGlite.create({ extensions: { pg_trgm } });
  const db = drizzle(client);
  return {
    db: db as unknown as Db,
    exec: async (q) => (await client.query<Record<string, unknown>>(q)).rows,
    migrateTo: (folder) => migrate(db, { migrationsFolder: folder }),
    close: () => client.close(),
  };
}
