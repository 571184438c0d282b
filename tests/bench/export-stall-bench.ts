/**
 * Another account's one-row list latency while clients hold exports open without reading
 * (docs/benchmarks/exports.md). Starts the production server in this process on DATABASE_URL
 * (PostgreSQL, a fresh database) or PGlite, gives 5 accounts ~10 MB of responses each, measures
 * the other account's list (20 calls), opens 2 stalled exports per big account (10 sockets that
 * read the first chunk and then nothing), and measures the list (up to 20 calls, stopping after
 * three that hit the bound) and /readyz again, each call bounded at 20 s.
 *
 *   TEST_DB=postgres DATABASE_URL=postgres://…/fresh npx tsx tests/bench/export-stall-bench.ts
 *   TEST_DB=pglite BENCH_ACCOUNTS=2 BENCH_ROWS=12000 BENCH_ANSWER_BYTES=600 npx tsx tests/bench/export-stall-bench.ts
 */
import net from 'node:net';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { ts, V2 } from '../helpers/api-fixtures';
import { startTestServer } from '../helpers/server';

/** Sizes (env, for PGlite's keyset path, whose pages are 1,000 rows: many small rows make many pages). */
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 5);
const ROWS = Number(process.env.BENCH_ROWS ?? 2500);
const ANSWER_BYTES = Number(process.env.BENCH_ANSWER_BYTES ?? 4000);
const PER_ACCOUNT = 2;
const CALLS = 20;
const BOUND_MS = 20_000;

/** Opens an export and reads its first chunk, then nothing; a status of 0: no answer within BOUND_MS. */
function stalledExport(base: string, key: string): Promise<{ status: number; socket: net.Socket }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    setTimeout(() => resolve({ status: 0, socket }), BOUND_MS).unref();
    socket.once('error', () => {});
    socket.once('connect', () => socket.write(`GET ${V2}/response/export HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n\r\n`));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1]), socket });
    });
  });
}

async function call(url: string, headers: Record<string, string> = {}): Promise<{ ms: number; status: number | string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(BOUND_MS) });
    await res.arrayBuffer();
    return { ms: performance.now() - t0, status: res.status };
  } catch {
    return { ms: performance.now() - t0, status: 'timeout' };
  }
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function main() {
  const server = await startTestServer({ EXPORT_STALL_SECONDS: '120' });
  const big = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [
      conv,
      ...Array.from({ length: ROWS }, (_, i) => responseLine(conv, { created_at: ts(i), answer: `${i} ${'b'.repeat(ANSWER_BYTES)}` })),
    ]);
    big.push(acct);
  }
  const other = await createTestAccount();
  const list = () => call(`${server.url}${V2}/response?resultsPerPage=1`, { authorization: `Bearer ${other.key}` });
  for (let i = 0; i < 5; i++) await list();
  const before = [];
  for (let i = 0; i < CALLS; i++) before.push(await list());
  const stalled = [];
  for (const acct of big) for (let k = 0; k < PER_ACCOUNT; k++) stalled.push(await stalledExport(server.url, acct.key));
  await new Promise((r) => setTimeout(r, 1000));
  const during = [];
  // Three calls that hit the bound are enough to tell (each waits BOUND_MS).
  for (let i = 0; i < CALLS && during.filter((c) => c.status === 'timeout').length < 3; i++) during.push(await list());
  const readyz = await call(`${server.url}/readyz`);
  const summary = (xs: Array<{ ms: number; status: number | string }>) => ({
    p50_ms:
      Math.round(
        pct(
          xs.map((x) => x.ms),
          0.5,
        ) * 10,
      ) / 10,
    max_ms: Math.round(Math.max(...xs.map((x) => x.ms)) * 10) / 10,
    statuses: [...new Set(xs.map((x) => x.status))],
  });
  console.log(
    JSON.stringify(
      {
        db: server.kind,
        stalled_export_statuses: stalled.map((s) => s.status),
        list_before: summary(before),
        list_during: summary(during),
        readyz_during: readyz,
      },
      null,
      1,
    ),
  );
  for (const s of stalled) s.socket.destroy();
  await server.close();
  process.exit(0);
}

void main();
