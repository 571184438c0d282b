/**
 * Export throughput and memory (docs/contracts.md §10): N responses (default 200,000) in one account,
 * bulk-inserted by SQL, exported as NDJSON and CSV through the direct door while the server
 * process's RSS is sampled every 50 ms; then once more with a slow reader. Prints one JSON line per run.
 *   TEST_DB=postgres DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> node --expose-gc --import tsx tests/bench/export-bench.ts [N] [options]
 * Options:
 *   --reuse    keep the data between runs: an account "Export bench N" left by an earlier run is
 *              used again (its 1M rows take minutes to insert); without it a new account is filled.
 *   --keyset   export by keyset pages also on PostgreSQL (the path PGlite takes; "before").
 *   --external also read each export from a separate process (`curl … | wc -l`), so the reader's
 *              CPU is not the server's: the in-process `fetch` reader shares the server's thread.
 *   --only=a,b the runs to do, of: ndjson, likes, csv, slow (all by default).
 */
import { CLI } from '../../lib/audit/contract';
import { sql } from 'drizzle-orm';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { rows, getDb } from '../../db/client';
import { createApiKey } from '../../lib/accounts/service';
import { setExportKeysetOnly } from '../../lib/export/service';
import { conversationLine, createTestAccount, importLines, newChannelIds } from '../helpers/builders';
import { startTestServer } from '../helpers/server';

const args = process.argv.slice(2);
const N = Number(args.find((a) => /^\d+$/.test(a)) ?? 200_000);
const REUSE = args.includes('--reuse');
const KEYSET = args.includes('--keyset');
const EXTERNAL = args.includes('--external');
const ONLY = (args.find((a) => a.startsWith('--only='))?.slice(7) ?? 'ndjson,likes,csv,slow').split(',');

const mb = (x: number) => Math.round(x / 1e6);

function sampler() {
  (globalThis as { gc?: () => void }).gc?.();
  const rss: number[] = [];
  const heap: number[] = [];
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    rss.push(m.rss);
    heap.push(m.heapUsed);
  }, 50);
  return () => {
    clearInterval(timer);
    return { rss_min_mb: mb(Math.min(...rss)), rss_max_mb: mb(Math.max(...rss)), heap_min_mb: mb(Math.min(...heap)), heap_max_mb: mb(Math.max(...heap)) };
  };
}

/** In-process reader (fetch in the server's own process and thread). */
async function run(url: string, key: string, delayEveryMb = 0) {
  const stop = sampler();
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
    if (delayEveryMb && sinceDelay > delayEveryMb * 1e6) {
      sinceDelay = 0;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    url: url.replace(/^.*customer-api\/v2/, ''),
    reader: 'in-process',
    status: res.status,
    lines,
    mb: mb(bytes),
    seconds: +seconds.toFixed(2),
    records_per_s: Math.round(lines / seconds),
    ...stop(),
    slow: !!delayEveryMb,
    path: KEYSET ? 'keyset' : 'copy',
  };
}

/** Separate reader process: curl writes the body into `wc -l` (lines) while this process only serves. */
async function runExternal(url: string, key: string) {
  const stop = sampler();
  const started = performance.now();
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('sh', ['-c', 'curl -sS -f -H "$AUTH" "$URL" | wc -lc'], { env: { ...process.env, AUTH: `Authorization: Bearer ${key}`, URL: url } });
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      text += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`curl: ${code} ${text}`))));
  });
  const seconds = (performance.now() - started) / 1000;
  const [lines, bytes] = out.trim().split(/\s+/).map(Number) as [number, number];
  return {
    url: url.replace(/^.*customer-api\/v2/, ''),
    reader: 'curl process',
    lines,
    mb: mb(bytes),
    seconds: +seconds.toFixed(2),
    records_per_s: Math.round(lines / seconds),
    ...stop(),
    path: KEYSET ? 'keyset' : 'copy',
  };
}

/** The bench account: reused ("Export bench N" with N responses) or created and filled. */
async function benchAccount(): Promise<{ accountId: number; key: string }> {
  const db = await getDb();
  const name = `Export bench ${N}`;
  if (REUSE) {
    const [found] = await rows<{ id: number }>(
      db,
      sql`SELECT a.id FROM accounts a WHERE a.name = ${name}
      AND (SELECT count(*) FROM responses r WHERE r.account_id = a.id) = ${N} ORDER BY a.id DESC LIMIT 1`,
    );
    if (found) {
      const key = await createApiKey(CLI, { accountId: found.id, name: 'export bench' });
      console.log(JSON.stringify({ reused: N, account: found.id }));
      return { accountId: found.id, key: key.key };
    }
  }
  const acct = await createTestAccount(name);
  const [ch] = await newChannelIds(1);
  const conv = conversationLine({ channel_id: ch! });
  await importLines(acct.accountId, [conv]);
  const t0 = performance.now();
  await db.execute(sql`
    INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, likes, dislikes, comments, created_at)
    SELECT gen_random_uuid(), ${acct.accountId}, ${conv.conversation_id}, ${ch!},
      'How do I ' || i || ' reset "my" password, please?', repeat('Answer text with, commas. ', 6) || i,
      i % 7, i % 3, i % 2, timestamp '2026-01-01' + (i % 86400) * interval '1 second'
    FROM generate_series(1, ${N}) i`);
  await db.execute(sql`ANALYZE responses`);
  console.log(JSON.stringify({ inserted: N, seconds: +((performance.now() - t0) / 1000).toFixed(1) }));
  return acct;
}

async function main() {
  const server = await startTestServer();
  try {
    setExportKeysetOnly(KEYSET);
    console.log(
      JSON.stringify({
        machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`,
        node: process.version,
        db: server.kind,
        load: os.loadavg().map((x) => +x.toFixed(2)),
        at: new Date().toISOString(),
        max_old_space: process.execArgv.find((a) => a.includes('old-space')) ?? null,
      }),
    );
    const acct = await benchAccount();
    const base = `${server.url}/customer-api/v2/response/export`;
    const runs: Array<[string, string, number]> = [
      ['ndjson', base, 0],
      ['likes', `${base}?order_by=likes&sort=ASC`, 0],
      ['csv', `${base}?format=csv`, 0],
      ['slow', base, 5],
    ];
    for (const [what, url, slow] of runs) {
      if (!ONLY.includes(what)) continue;
      console.log(JSON.stringify(await run(url, acct.key, slow)));
      if (EXTERNAL && !slow) console.log(JSON.stringify(await runExternal(url, acct.key)));
    }
    console.log(JSON.stringify({ load_after: os.loadavg().map((x) => +x.toFixed(2)) }));
  } finally {
    await server.close();
  }
}

void main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
