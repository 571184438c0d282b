/**
 * Export throughput and memory (CONTRACTS §10): N responses (default 200,000) in one account,
 * bulk-inserted by SQL, exported as NDJSON and CSV through the direct door while the process's
 * RSS is sampled every 50 ms; then once more with a slow reader. Prints one JSON line per run.
 *   TEST_DB=postgres DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> node --expose-gc --import tsx tests/bench/export-bench.ts [N]
 */
import { sql } from 'drizzle-orm';
import os from 'node:os';
import { getDb } from '../../db/client';
import { conversationLine, createTestAccount, importLines, newChannelIds } from '../helpers/builders';
import { startTestServer } from '../helpers/server';

const N = Number(process.argv[2] ?? 200_000);

async function run(url: string, key: string, delayEveryMb = 0) {
  (globalThis as { gc?: () => void }).gc?.();
  const rss: number[] = [];
  const heap: number[] = [];
  const timer = setInterval(() => { const m = process.memoryUsage(); rss.push(m.rss); heap.push(m.heapUsed); }, 50);
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  const reader = res.body!.getReader();
  let bytes = 0;
  let lines = 0;
  let sinceDelay = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    sinceDelay += value.length;
    for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines++;
    if (delayEveryMb && sinceDelay > delayEveryMb * 1e6) { sinceDelay = 0; await new Promise((r) => setTimeout(r, 200)); }
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  const mb = (x: number) => Math.round(x / 1e6);
  return { url: url.replace(/^.*customer-api\/v2/, ''), status: res.status, lines, mb: mb(bytes), seconds: +seconds.toFixed(2),
    records_per_s: Math.round(lines / seconds), rss_min_mb: mb(Math.min(...rss)), heap_min_mb: mb(Math.min(...heap)), rss_max_mb: mb(Math.max(...rss)), heap_max_mb: mb(Math.max(...heap)), slow: !!delayEveryMb };
}

async function main() {
const server = await startTestServer();
try {
  const acct = await createTestAccount();
  const [ch] = await newChannelIds(1);
  const conv = conversationLine({ channel_id: ch! });
  await importLines(acct.accountId, [conv]);
  const db = await getDb();
  const t0 = performance.now();
  await db.execute(sql`
    INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, likes, dislikes, comments, created_at)
    SELECT gen_random_uuid(), ${acct.accountId}, ${conv.conversation_id}, ${ch!},
      'How do I ' || i || ' reset "my" password, please?', repeat('Answer text with, commas. ', 6) || i,
      i % 7, i % 3, i % 2, timestamp '2026-01-01' + (i % 86400) * interval '1 second'
    FROM generate_series(1, ${N}) i`);
  await db.execute(sql`ANALYZE responses`);
  console.log(JSON.stringify({ inserted: N, seconds: +((performance.now() - t0) / 1000).toFixed(1), machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`, node: process.version, db: server.kind }));
  const base = `${server.url}/customer-api/v2/response/export`;
  console.log(JSON.stringify(await run(base, acct.key)));
  console.log(JSON.stringify(await run(`${base}?order_by=likes&sort=ASC`, acct.key)));
  console.log(JSON.stringify(await run(`${base}?format=csv`, acct.key)));
  console.log(JSON.stringify(await run(base, acct.key, 5)));
} finally {
  await server.close();
}
}

void main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
