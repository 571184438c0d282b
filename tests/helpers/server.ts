/**
 * Starts the real production server in this test process on a fresh database:
 * TEST_DB=pglite (default) → a new DATA_DIR; TEST_DB=postgres → DATABASE_URL (a fresh database
 * that scripts/test.mjs created for the run). Tests create their own data through the same lib
 * services the CLI and the seed use (they share this process's database handle).
 */
import fs from 'node:fs';
import { newDataDir } from './data-dir';

export type TestServer = {
  url: string;
  dataDir?: string;
  kind: 'pglite' | 'postgres';
  /** `keepData`: the embedded database's directory stays (a CLI run afterwards opens it). */
  close: (opts?: { keepData?: boolean }) => Promise<void>;
  inboundSmtpPort: number | null;
};

export async function startTestServer(extraEnv: Record<string, string> = {}): Promise<TestServer> {
  const kind = process.env.TEST_DB === 'postgres' ? 'postgres' : 'pglite';
  let dataDir: string | undefined;
  if (kind === 'postgres') {
    if (!process.env.DATABASE_URL) throw new Error('TEST_DB=postgres needs DATABASE_URL (scripts/test.mjs sets it)');
  } else {
    delete process.env.DATABASE_URL;
    dataDir = newDataDir('svc-test-');
    process.env.DATA_DIR = dataDir;
  }
  process.env.SVC_DEMO = '0';
  (process.env as Record<string, string>).NODE_ENV = 'production';
  process.env.HOST = '127.0.0.1';
  process.env.PRELOAD_PAGES = '0';
  Object.assign(process.env, extraEnv);
  const { startServer } = await import('../../lib/server/http');
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({ port: 0, host: '127.0.0.1' });
  } catch (e) {
    // Release the database (and PGlite's lock) so the test process can exit.
    const { closeDatabase } = await import('../../db/client');
    await closeDatabase().catch(() => {});
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    url: server.url,
    dataDir,
    kind,
    inboundSmtpPort: server.inboundSmtpPort,
    close: async (opts = {}) => {
      await server.close();
      if (dataDir && !opts.keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
