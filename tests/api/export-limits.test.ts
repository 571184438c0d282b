/**
 * Bounded exports (docs/contracts.md §10 limits): clients that open an export and never read hold at most
 * EXPORTS_PER_ACCOUNT slots of their account and the instance's share of the pool; beyond, 429
 * problem+json with Retry-After. Another account's list, a widget answer and /readyz keep
 * answering meanwhile, and a reader that takes nothing for EXPORT_STALL_SECONDS is disconnected,
 * its statement ended and its connection released. Real server, real database, real sockets.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type TestAccount } from '../helpers/builders';
import { ts, V2 } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectVisitor, createTestWidgetClient } from '../helpers/widget';

/** Long enough for the checks made while the readers are stalled, on a busy machine. */
const STALL_SECONDS = 8;
const POOL = 6; // the instance's export share: 3
let server: TestServer;
let runningExports: (on?: 'primary' | 'replica') => number;

before(async () => {
  server = await startTestServer({
    EXPORTS_PER_ACCOUNT: '2',
    EXPORT_STALL_SECONDS: String(STALL_SECONDS),
    DATABASE_POOL_SIZE: String(POOL),
    // PostgreSQL: the same server as a read replica (a pool of its own, lag 0), so API keys' exports read from "the replica".
    ...(process.env.TEST_DB === 'postgres' ? { DATABASE_READ_URL: process.env.DATABASE_URL! } : {}),
  });
  ({ runningExports } = await import('../../lib/export/slots'));
});
after(async () => {
  await server?.close();
});

/** ~10 MB of NDJSON: far more than the sockets between the server and a client that never reads buffer. */
async function bigAccount(): Promise<TestAccount> {
  const acct = await createTestAccount();
  const [ch] = await newChannelIds(1);
  const conv = conversationLine({ channel_id: ch! });
  await importLines(acct.accountId, [
    conv,
    ...Array.from({ length: 2500 }, (_, i) => responseLine(conv, { created_at: ts(i), answer: `${i} ${'s'.repeat(4000)}` })),
  ]);
  return acct;
}

type Stalled = { status: number; head: string; closed: Promise<void>; socket: net.Socket };

/** Opens an export (an API key's, or a dashboard session's with `cookie`), reads its first chunk (the status line), then never reads again. */
function stalledExport(key: string, cookie?: string): Promise<Stalled> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('error', () => {});
    socket.once('connect', () =>
      socket.write(`GET ${V2}/response/export HTTP/1.1\r\nHost: ${hostname}\r\n${cookie ? `Cookie: ${cookie}` : `Authorization: Bearer ${key}`}\r\n\r\n`),
    );
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      const head = chunk.toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      if (!status) reject(new Error(`no status line: ${head.slice(0, 100)}`));
      resolve({ status, head, closed, socket });
    });
  });
}

async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await f();
  return [performance.now() - t0, v];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function copyStatements(): Promise<number> {
  const { getDb, rows } = await import('../../db/client');
  const [row] = await rows<{ n: number }>(
    await getDb(),
    sql`SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND query LIKE 'COPY (SELECT%' AND state = 'active' AND pid <> pg_backend_pid()`,
  );
  return row!.n;
}

async function until(what: string, probe: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    assert.ok(Date.now() < end, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('stalled export readers', () => {
  it('hold at most their slots, get 429 beyond, leave other accounts alone and are cut after the stall limit', { timeout: 120_000 }, async () => {
    const [a, b] = [await bigAccount(), await bigAccount()];
    const other = await createTestAccount();
    const list = api(server.url, other.key);
    const client = await createTestWidgetClient(other.accountId, ['example.com']);
    const visitor = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, 'https://example.com');
    try {
      const listOnce = async () => {
        const r = await list(`${V2}/response?resultsPerPage=1`);
        assert.equal(r.status, 200);
      };
      for (let i = 0; i < 3; i++) await listOnce(); // warm
      const baseline: number[] = [];
      for (let i = 0; i < 10; i++) baseline.push((await timed(listOnce))[0]);

      const perInstance = POOL / 2;
      // Account a: two exports (the per-account limit), the third is refused.
      const held: Stalled[] = [];
      for (let i = 0; i < 2; i++) held.push(await stalledExport(a.key));
      const refusedA = await stalledExport(a.key);
      // Account b fills the instance's share; beyond it, 429 too.
      for (let i = held.length; i < perInstance; i++) held.push(await stalledExport(b.key));
      const refusedB = await stalledExport(b.key);
      for (const h of held) assert.equal(h.status, 200, h.head.slice(0, 200));
      for (const r of [refusedA, refusedB]) {
        assert.equal(r.status, 429, r.head.slice(0, 300));
        assert.match(r.head, /\r\ncontent-type: application\/problem\+json/i);
        assert.match(r.head, new RegExp(`\\r\\nretry-after: ${STALL_SECONDS}\\r\\n`, 'i'));
        assert.match(r.head, /"type":"urn:svc:problem:rate-limited"/);
        r.socket.destroy();
      }
      assert.equal(runningExports(), perInstance);
      // Loopback buffers can take a whole 10 MB export, ending its COPY early: at least one runs, never more than the share.
      if (server.kind === 'postgres') {
        await until('the COPY statements to run', async () => (await copyStatements()) >= 1);
        assert.ok((await copyStatements()) <= perInstance);
      }

      // Meanwhile: another account's list, a widget answer and /readyz.
      const during: number[] = [];
      for (let i = 0; i < 10; i++) during.push((await timed(listOnce))[0]);
      const [askMs] = await timed(async () => {
        const asked = await visitor.ok<{ response_id: string }>('ask', { client_message_id: 'during-stall', text: 'Hello?' });
        const end = await visitor.finished(asked.response_id, 15_000);
        assert.equal(end.type, 'answer.done');
      });
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(runningExports(), perInstance, 'the readers were still stalled while the others were measured');
      console.log(
        `# ${server.kind}: other account's list median ${median(baseline).toFixed(1)} ms before, ${median(during).toFixed(1)} ms ` +
          `(max ${Math.max(...during).toFixed(1)}) with ${perInstance} stalled exports; widget answer ${askMs.toFixed(0)} ms`,
      );
      // PostgreSQL: the pool keeps connections for everyone else; PGlite: the stalled exports read spooled files.
      assert.ok(Math.max(...during) < 1000, `list during stalls took ${Math.max(...during)} ms`);

      // The stall limit: every stalled reader's statement is ended and its connection and slot released
      // (while the clients still read nothing), and its connection is closed before the body's end.
      await until('every slot to be released', () => runningExports() === 0, STALL_SECONDS * 1000 + 5000);
      if (server.kind === 'postgres') await until('the COPY statements to end', async () => (await copyStatements()) === 0);
      for (const h of held) {
        const rest: Buffer[] = [];
        h.socket.on('data', (c: Buffer) => rest.push(c));
        h.socket.resume();
        await Promise.race([h.closed, new Promise((_, reject) => setTimeout(() => reject(new Error('the server kept the connection open')), 15_000))]);
        const tail = Buffer.concat(rest).subarray(-16).toString('latin1');
        assert.ok(!tail.endsWith('\r\n0\r\n\r\n'), 'the body was cut before its end');
      }
      const again = await fetch(`${server.url}${V2}/response/export?query=1 s`, { headers: { authorization: `Bearer ${a.key}` } });
      assert.equal(again.status, 200);
      assert.ok((await again.text()).length > 0);
    } finally {
      visitor.close();
    }
  });

  it("exports stalled on the read replica fill the replica's share only: a member's export from the primary still runs", { timeout: 90_000 }, async (t) => {
    if (server.kind !== 'postgres') return t.skip('PostgreSQL only (the embedded database has no replica)');
    const { signIn } = await import('../helpers/signin');
    const [a, b] = [await bigAccount(), await bigAccount()];
    const held: Stalled[] = [];
    try {
      for (let i = 0; i < POOL / 2; i++) held.push(await stalledExport([a, b][i % 2]!.key));
      const refused = await stalledExport(b.key);
      refused.socket.destroy();
      assert.deepEqual([...held.map((h) => h.status), refused.status], [...Array(POOL / 2).fill(200), 429]);
      assert.equal(runningExports('replica'), POOL / 2);
      const member = await bigAccount();
      const { cookie } = await signIn(server.url, member.email, member.password);
      const fromPrimary = await stalledExport('', cookie!);
      held.push(fromPrimary);
      assert.equal(fromPrimary.status, 200, fromPrimary.head.slice(0, 300));
      assert.deepEqual([runningExports('replica'), runningExports('primary')], [POOL / 2, 1]);
    } finally {
      for (const h of held) h.socket.destroy();
    }
    await until('every slot to be released', () => runningExports() === 0, STALL_SECONDS * 1000 + 5000);
  });

  it('a slow reader that keeps taking data is not cut', { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [conv, ...Array.from({ length: 300 }, (_, i) => responseLine(conv, { created_at: ts(i), answer: 'x'.repeat(2000) }))]);
    const res = await fetch(`${server.url}${V2}/response/export?format=csv`, { headers: { authorization: `Bearer ${acct.key}` } });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let bytes = 0;
    const started = Date.now();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      if (Date.now() - started < (STALL_SECONDS + 1) * 1000) await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(bytes > 600_000);
    await until('the slot to be released', () => runningExports() === 0);
  });
});

describe('statement_timeout', () => {
  it("PostgreSQL: the server's connections carry it, and a query cut by it is a 503 with Retry-After", async (t) => {
    if (server.kind !== 'postgres') return t.skip('PostgreSQL only (PGlite has no pool)');
    const { getDb, rows } = await import('../../db/client');
    const { getEnv } = await import('../../lib/env');
    const { toAppError } = await import('../../lib/core/problem');
    const db = await getDb();
    const [shown] = await rows<{ statement_timeout: string }>(db, sql`SHOW statement_timeout`);
    assert.equal(shown!.statement_timeout, `${getEnv().DATABASE_STATEMENT_TIMEOUT_MS / 1000}s`);
    let error: unknown = null;
    await db
      .transaction(async (tx) => {
        await tx.execute(sql`SET LOCAL statement_timeout = 100`);
        await tx.execute(sql`SELECT pg_sleep(2)`);
      })
      .catch((e: unknown) => {
        error = e;
      });
    assert.ok(error, 'the statement was cut');
    const mapped = toAppError(error, 'test');
    assert.equal(mapped.status, 503);
    assert.equal(mapped.headers?.['Retry-After'], '5');
  });
});
