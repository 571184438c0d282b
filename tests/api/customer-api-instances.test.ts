// One database: PostgreSQL — two server processes share one database
/**
 * API keys on several instances (docs/contracts.md §5, §9): two server processes on one PostgreSQL and one
 * Redis. A key revoked through one instance is refused by the other at once (the invalidation
 * message), and in any case within a second (the cache bound). PostgreSQL with Redis only: the
 * embedded database belongs to one process.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { assertUnauthorized, V2 } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/1';
const skip = process.env.TEST_DB !== 'postgres' ? 'needs TEST_DB=postgres (PGlite is single-process)' : false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let a: TestServer;
let b: { url: string; child: ChildProcess } | undefined;
const env = { REDIS_URL, REDIS_PREFIX: `svc-test-${randomUUID().slice(0, 8)}:` };

/** A second, independent server process on the same database and Redis. */
async function startSecondInstance(): Promise<{ url: string; child: ChildProcess }> {
  const entry = path.join(process.cwd(), 'lib/server/http.ts');
  const code = `const m = await import(${JSON.stringify(entry)});
    const startServer = m.startServer ?? m.default.startServer;
    const s = await startServer({ port: 0, host: '127.0.0.1' });
    process.stdout.write('LISTENING ' + s.url + '\\n');
    process.on('SIGTERM', () => { s.close().finally(() => process.exit(0)); });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    env: { ...process.env, ...env, NODE_ENV: 'production', SVC_DEMO: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`second instance did not start: ${out}`)), 180_000);
    child.stdout!.on('data', (d) => {
      out += String(d);
      const m = /LISTENING (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (c) => {
      clearTimeout(timer);
      reject(new Error(`second instance exited ${c}: ${out}`));
    });
  });
  return { url, child };
}

describe('API key revocation across instances', { skip }, () => {
  before(async () => {
    a = await startTestServer(env);
    b = await startSecondInstance();
  });
  after(async () => {
    if (b) {
      b.child.kill('SIGTERM');
      await new Promise((r) => b!.child.once('exit', r));
    }
    await a?.close();
    const { closeRedis } = await import('../../lib/redis/client');
    await closeRedis();
  });

  it('a key revoked on one instance is refused by the other at once, and within a second at most', async () => {
    const { revokeApiKey } = await import('../../lib/accounts/service');
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [conv, responseLine(conv)]);
    const onB = api(b!.url, acct.key);
    assert.equal((await onB(`${V2}/response`)).status, 200, 'B reads and caches the key');
    assert.equal((await api(a.url, acct.key)(`${V2}/response`)).status, 200, 'A too');
    await sleep(300); // B's invalidation subscription is in place
    assert.equal((await onB(`${V2}/response`)).status, 200, 'still cached on B');

    const revoked = Date.now();
    await revokeApiKey(CLI, null, acct.keyId); // through instance A's services: publishes the invalidation
    await sleep(100);
    // 100 ms after: only the invalidation message can explain a refusal (B's copy is good for 1 s).
    assertUnauthorized(await onB(`${V2}/response`));
    await sleep(Math.max(0, revoked + 1100 - Date.now()));
    for (const base of [a.url, b!.url]) assertUnauthorized(await api(base, acct.key)(`${V2}/response`));
  });
});
