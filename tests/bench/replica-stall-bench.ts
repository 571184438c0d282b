/**
 * Ten exports stalled on the read replica, another account's list on the primary (CONTRACTS §19,
 * issue 38's speed goal: its p95 within 1.2× of its idle figure). Makes a private primary with a
 * synchronous standby and an async replica (tests/helpers/replication.ts), starts the production
 * server in this process with DATABASE_READ_URL, gives 5 accounts ~10 MB of responses each, measures
 * the other account's list through a dashboard session (which reads the primary), opens 2 stalled
 * API-key exports per big account (read from the replica), and measures the list again.
 *
 *   TEST_DB=postgres nice -n 10 npx tsx tests/bench/replica-stall-bench.ts
 */
import net from 'node:net';
import { ts, V2 } from '../helpers/api-fixtures';
import { ReplicatedCluster } from '../helpers/replication';

const ACCOUNTS = 5;
const ROWS = Number(process.env.BENCH_ROWS ?? 2500);
const PER_ACCOUNT = 2;
const CALLS = Number(process.env.BENCH_CALLS ?? 200);

/** Opens an export and reads its first chunk, then nothing. */
function stalledExport(base: string, key: string): Promise<{ status: number; socket: net.Socket }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('error', () => {});
    socket.once('connect', () => socket.write(`GET ${V2}/response/export HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n\r\n`));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1]), socket });
    });
  });
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function main() {
  const pg = await ReplicatedCluster.create({ replica: true });
  try {
    process.env.TEST_DB = 'postgres';
    process.env.DATABASE_URL = pg.url;
    process.env.DATABASE_READ_URL = pg.replica!.url;
    const { startTestServer } = await import('../helpers/server');
    const { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } = await import('../helpers/builders');
    const { signIn } = await import('../helpers/signin');
    const server = await startTestServer({ EXPORT_STALL_SECONDS: '120', EXPORTS_PER_ACCOUNT: '2', EXPORTS_PER_INSTANCE: '10', DATABASE_POOL_SIZE: '20' });
    const big = [];
    for (let a = 0; a < ACCOUNTS; a++) {
      const acct = await createTestAccount();
      const [ch] = await newChannelIds(1);
      const conv = conversationLine({ channel_id: ch! });
      await importLines(acct.accountId, [
        conv,
        ...Array.from({ length: ROWS }, (_, i) => responseLine(conv, { created_at: ts(i), answer: `${i} ${'b'.repeat(4000)}` })),
      ]);
      big.push(acct);
    }
    const other = await createTestAccount();
    const session = await signIn(server.url, other.email, other.password);
    const cookie = session.cookie!;
    const list = async () => {
      const t0 = performance.now();
      const res = await fetch(`${server.url}${V2}/response?resultsPerPage=15`, { headers: { cookie } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`list ${res.status}`);
      return performance.now() - t0;
    };
    // The replica has the data before the exports start (it reads only while it keeps up).
    await new Promise((r) => setTimeout(r, 3000));
    for (let i = 0; i < 20; i++) await list();
    const idle = [];
    for (let i = 0; i < CALLS; i++) idle.push(await list());
    const stalled = [];
    for (const acct of big) for (let k = 0; k < PER_ACCOUNT; k++) stalled.push(await stalledExport(server.url, acct.key));
    await new Promise((r) => setTimeout(r, 1000));
    const replicaBusy = pg.replica!.sql("select count(*) from pg_stat_activity where state = 'active' and query ilike 'copy%'");
    const during = [];
    for (let i = 0; i < CALLS; i++) during.push(await list());
    const round = (x: number) => Math.round(x * 100) / 100;
    console.log(
      JSON.stringify({
        stalled_export_statuses: stalled.map((s) => s.status),
        copies_active_on_replica: Number(replicaBusy),
        list_idle_ms: { p50: round(pct(idle, 0.5)), p95: round(pct(idle, 0.95)) },
        list_during_ms: { p50: round(pct(during, 0.5)), p95: round(pct(during, 0.95)) },
        p95_ratio: round(pct(during, 0.95) / pct(idle, 0.95)),
      }),
    );
    for (const s of stalled) s.socket.destroy();
    await server.close();
  } finally {
    pg.destroy();
  }
  process.exit(0);
}

void main();
