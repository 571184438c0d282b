// One database: PGlite — PGlite's directory lock
/**
 * PGlite is single-process (docs/contracts.md §1): a CLI run against a DATA_DIR a server holds fails at
 * once with a message naming the directory and the process; a lock left by a dead process is
 * taken over.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { acquireDataDirLock, getDb, lockSocketPath, rows } from '../../db/client';
import { isAppError } from '../../lib/core/errors';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { deadPid, parseSuccess, runCli, testDbKind } from '../helpers/cli';
import { startTestServer, type TestServer } from '../helpers/server';

const pgliteOnly = testDbKind === 'pglite' ? {} : { skip: 'PGlite only: PostgreSQL serves several processes' };
const tempDirs: string[] = [];
const freshDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lock-test-'));
  tempDirs.push(dir);
  return dir;
};
after(() => {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A child process that holds the lock of `dir` through acquireDataDirLock (resolves once it does). */
async function holdLock(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'fixtures', 'hold-lock.ts'), dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the lock holder did not start')), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('held')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the lock holder exited (${code})`));
    });
  });
  return child;
}

describe('acquireDataDirLock', () => {
  it('writes this pid into svc.lock and removes it on release', async () => {
    const dir = freshDir();
    const release = await acquireDataDirLock(dir);
    assert.equal(fs.readFileSync(path.join(dir, 'svc.lock'), 'utf8'), String(process.pid));
    release();
    assert.equal(fs.existsSync(path.join(dir, 'svc.lock')), false);
    release(); // twice is harmless
  });

  it('refuses at once when a live process holds the directory, naming both, and leaves its lock alone', async () => {
    const dir = freshDir();
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(path.join(dir, 'svc.lock'), String(holder.pid));
      const started = Date.now();
      await assert.rejects(acquireDataDirLock(dir), (e: unknown) => {
        assert.ok(isAppError(e));
        assert.equal(e.code, 'database_busy');
        assert.ok(e.message.includes(dir), e.message);
        assert.ok(e.message.includes(String(holder.pid)), e.message);
        return true;
      });
      assert.ok(Date.now() - started < 1000);
      assert.equal(fs.readFileSync(path.join(dir, 'svc.lock'), 'utf8'), String(holder.pid));
    } finally {
      holder.kill('SIGKILL');
    }
  });

  const STALE: Array<{ name: string; content: () => Promise<string> }> = [
    { name: 'the pid of a dead process', content: async () => String(await deadPid()) },
    { name: 'garbage', content: async () => 'not a pid' },
    { name: 'nothing', content: async () => '' },
  ];
  for (const c of STALE) {
    it(`takes over a stale lock holding ${c.name}`, async () => {
      const dir = freshDir();
      fs.writeFileSync(path.join(dir, 'svc.lock'), await c.content());
      const release = await acquireDataDirLock(dir);
      assert.equal(fs.readFileSync(path.join(dir, 'svc.lock'), 'utf8'), String(process.pid));
      release();
    });
  }

  it("takes over a lock naming THIS process's pid (a restarted container after kill -9), with or without the dead owner's socket", async () => {
    for (const leaveSocket of [false, true]) {
      const dir = freshDir();
      if (leaveSocket) {
        // A real owner killed with SIGKILL leaves its lock and its socket file behind.
        const owner = await holdLock(dir);
        owner.kill('SIGKILL');
        await new Promise((r) => owner.once('exit', r));
        assert.ok(fs.existsSync(lockSocketPath(dir)), 'the killed owner left its socket file');
      }
      fs.writeFileSync(path.join(dir, 'svc.lock'), String(process.pid));
      const started = Date.now();
      const release = await acquireDataDirLock(dir);
      assert.ok(Date.now() - started < 1000, `took ${Date.now() - started} ms`);
      assert.equal(fs.readFileSync(path.join(dir, 'svc.lock'), 'utf8'), String(process.pid));
      release();
    }
  });

  it('refuses at once while a live owner holds the lock, even when the lock file names our pid', async () => {
    const dir = freshDir();
    const owner = await holdLock(dir);
    try {
      for (const content of [String(owner.pid), String(process.pid)]) {
        fs.writeFileSync(path.join(dir, 'svc.lock'), content);
        const started = Date.now();
        await assert.rejects(acquireDataDirLock(dir), (e: unknown) => isAppError(e) && e.code === 'database_busy' && e.message.includes(dir));
        assert.ok(Date.now() - started < 1000, `refused after ${Date.now() - started} ms`);
      }
    } finally {
      owner.kill('SIGKILL');
    }
  });

  it('refuses a second open in the same process', async () => {
    const dir = freshDir();
    const release = await acquireDataDirLock(dir);
    try {
      await assert.rejects(acquireDataDirLock(dir), (e: unknown) => isAppError(e) && e.code === 'database_busy');
    } finally {
      release();
    }
  });
});

describe('the CLI and a running server on one PGlite directory', pgliteOnly, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  const CLI_CASES: Array<{ name: string; args: (accountId: number, file: string) => string[] }> = [
    { name: 'apikey create', args: (id) => ['apikey', 'create', '--account', String(id)] },
    {
      name: 'account create',
      args: () => ['account', 'create', '--name', 'Blocked', '--admin-email', 'blocked@example.test', '--admin-password', 'long enough pw'],
    },
    { name: 'import', args: (id, file) => ['import', '--account', String(id), '--file', file] },
  ];

  for (const c of CLI_CASES) {
    it(`${c.name} fails at once with a message naming the directory and the server process`, async () => {
      const acct = await createTestAccount('Locked');
      const [ch] = await newChannelIds(1);
      const conv = conversationLine({ channel_id: ch! });
      const file = path.join(freshDir(), 'x.ndjson');
      fs.writeFileSync(file, `${JSON.stringify(conv)}\n`);
      const db = await getDb();
      const count = async () =>
        (
          await rows<{ n: number }>(
            db,
            sql`
        SELECT ((SELECT count(*) FROM accounts) + (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM conversations)
          + (SELECT count(*) FROM admin_users))::int AS n`,
          )
        )[0]!.n;
      const before = await count();

      const r = await runCli(c.args(acct.accountId, file), { DATA_DIR: server.dataDir! });
      assert.notEqual(r.code, 0);
      assert.equal(r.signal, null);
      assert.ok(r.ms < 5000, `refused after ${r.ms} ms`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, JSON.stringify(r.stderr));
      assert.ok(r.stderr.includes(server.dataDir!), r.stderr);
      assert.ok(r.stderr.includes(String(process.pid)), `names the server pid ${process.pid}: ${r.stderr}`);

      // The server still holds its lock and keeps working; nothing was written.
      assert.equal(fs.readFileSync(path.join(server.dataDir!, 'svc.lock'), 'utf8'), String(process.pid));
      assert.equal(await count(), before);
      await importLines(acct.accountId, [conv, responseLine(conv)]);
      const list = await api(server.url, acct.key)('/customer-api/v2/response');
      assert.equal(list.status, 200);
      assert.equal(list.body.count, 1);
    });
  }

  it('a CLI on a directory whose lock names a dead process takes it over', async () => {
    const dir = freshDir();
    fs.writeFileSync(path.join(dir, 'svc.lock'), String(await deadPid()));
    const out = parseSuccess(
      await runCli(['account', 'create', '--name', 'Stale', '--admin-email', 'stale@example.test', '--admin-password', 'long enough pw'], { DATA_DIR: dir }),
    );
    assert.equal(out.name, 'Stale');
    assert.equal(fs.existsSync(path.join(dir, 'svc.lock')), false, 'the CLI released the lock when it finished');
    // And the directory is a healthy database for the next process.
    const again = await runCli(['apikey', 'create', '--account', String(out.account_id)], { DATA_DIR: dir });
    assert.equal(parseSuccess(again).account_id, out.account_id);
  });
});
