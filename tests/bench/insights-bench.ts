/**
 * Insights on a large account: N conversations (default 1,000,000) over a year, 2 responses each,
 * with handoffs, ratings, declined answers and dislikes mixed in; then GET /insights for 7, 30 and
 * 366 days (and one channel) through the direct door, the /insights page signed in, and the plans;
 * the first read after the load (it rolls every day up) and a read after a late change are timed apart.
 * Prints JSON lines.
 *   TEST_DB=postgres DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> node --import tsx tests/bench/insights-bench.ts [N]
 */
import { sql } from 'drizzle-orm';
import os from 'node:os';
import { getDb, rows } from '../../db/client';
import { createTestAccount, newChannelIds } from '../helpers/builders';
import { startTestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';

const N = Number(process.argv[2] ?? 1_000_000);

async function timed(label: string, url: string, headers: Record<string, string>, runs = 5) {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.text();
    ms.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 200)}`);
  }
  ms.sort((a, b) => a - b);
  return { label, median_ms: +ms[Math.floor(runs / 2)]!.toFixed(1), min_ms: +ms[0]!.toFixed(1), max_ms: +ms.at(-1)!.toFixed(1) };
}

async function main() {
  const server = await startTestServer();
  try {
    const acct = await createTestAccount();
    const [ch1, ch2] = (await newChannelIds(2)) as [number, number];
    const db = await getDb();
    const a = acct.accountId;
    const t0 = performance.now();
    await db.execute(sql`INSERT INTO channels (id, account_id, name) VALUES (${ch1}, ${a}, 'Bench 1'), (${ch2}, ${a}, 'Bench 2')`);
    // One conversation every ~31 s over 2025-06-01 … 2026-05-31; every 10th handed off, every 4th rated, most resolved;
    // two responses each (some liked, disliked, declined). In batches: one statement stays under the statement timeout.
    const BATCH = 100_000;
    for (let lo = 1; lo <= N; lo += BATCH) {
      const hi = Math.min(N, lo + BATCH - 1);
      // The app's statement timeout is for requests; the set-up lifts it for its own transaction.
      await db.transaction(async (tx) => {
        await tx.execute(sql`SET LOCAL statement_timeout = 0`);
        await tx.execute(sql`
        WITH c AS (
          INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at, handled_by, handed_off_at, first_reply_at, resolved_at, csat)
          SELECT gen_random_uuid(), ${a}, CASE WHEN i % 3 = 0 THEN ${ch2}::int ELSE ${ch1}::int END, 'Conversation ' || i,
            CASE WHEN i % 7 = 0 THEN 'Open' ELSE 'Resolved' END, t, t + interval '5 minutes',
            CASE WHEN i % 20 = 0 THEN 'human' ELSE 'ai' END,
            CASE WHEN i % 10 = 0 THEN t + interval '1 minute' END,
            CASE WHEN i % 10 = 0 THEN t + (60 + i % 600) * interval '1 second' END,
            CASE WHEN i % 7 <> 0 THEN t + (120 + i % 3600) * interval '1 second' END,
            CASE WHEN i % 4 = 0 THEN 1 + i % 5 END
          FROM generate_series(${lo}::int, ${hi}::int) i,
            LATERAL (SELECT timestamptz '2025-06-01' + (i::float8 * 31536000 / ${N}::int) * interval '1 second' AS t) s
          RETURNING id, channel_id, created_at
        )
        INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, created_at, likes, dislikes, declined)
        SELECT gen_random_uuid(), ${a}, c.id, c.channel_id, 'Question', 'Answer', c.created_at + k * interval '20 seconds',
          (k = 1 AND hashtext(c.id::text) % 5 = 0)::int, (k = 2 AND hashtext(c.id::text) % 17 = 0)::int, (k = 1 AND hashtext(c.id::text) % 9 = 0)
        FROM c, generate_series(1, 2) k`);
      });
    }
    await db.execute(sql`UPDATE accounts SET response_count = ${N * 2}, conversation_count = ${N} WHERE id = ${a}`);
    await db.execute(sql`SET statement_timeout = 0`);
    await db.execute(sql`VACUUM (ANALYZE) conversations`);
    await db.execute(sql`VACUUM (ANALYZE) responses`);
    console.log(
      JSON.stringify({
        conversations: N,
        responses: N * 2,
        setup_s: +((performance.now() - t0) / 1000).toFixed(1),
        machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`,
        loadavg: os.loadavg().map((x) => +x.toFixed(1)),
        db: server.kind,
      }),
    );
    const key = { authorization: `Bearer ${acct.key}` };
    const base = `${server.url}/customer-api/v2/insights`;
    const year = 'from=2025-06-01&to=2026-06-01';
    // The load marked every day dirty: the first read of the year refreshes the whole rollup (once).
    console.log(JSON.stringify(await timed('API 366 days, first read (rolls up every day)', `${base}?${year}`, key, 1)));
    for (const [label, q] of [
      ['API 7 days', 'from=2026-05-25&to=2026-05-31'],
      ['API 30 days', 'from=2026-05-02&to=2026-05-31'],
      ['API 30 days, one channel', `from=2026-05-02&to=2026-05-31&channel_id=${ch2}`],
      ['API 366 days (all 1M)', 'from=2025-06-01&to=2026-06-01'],
    ] as const)
      console.log(JSON.stringify(await timed(label, `${base}?${q}`, key)));
    // A late change (a rating) on one past day: the next read refreshes that day only.
    await db.execute(
      sql`UPDATE conversations SET csat = 5 WHERE id = (SELECT id FROM conversations WHERE account_id = ${a} AND created_at >= '2025-09-01' ORDER BY created_at LIMIT 1)`,
    );
    console.log(JSON.stringify(await timed('API 366 days after a rating on one past day', `${base}?${year}`, key, 1)));
    const s = await signIn(server.url, acct.email, acct.password);
    const cookie = { cookie: s.cookie! };
    console.log(JSON.stringify(await timed('page 30 days', `${server.url}/insights?from=2026-05-02&to=2026-05-31`, cookie)));
    console.log(JSON.stringify(await timed('page 366 days', `${server.url}/insights?from=2025-06-01&to=2026-06-01`, cookie)));
    const plan = await rows<{ 'QUERY PLAN': string }>(
      db,
      sql`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT count(*) FILTER (WHERE ra.disliked), count(*) FILTER (WHERE ra.answered)
        FROM conversations c LEFT JOIN LATERAL (
          SELECT bool_or(r.dislikes > 0) AS disliked, bool_or(NOT r.declined) AS answered FROM responses r WHERE r.account_id = ${a} AND r.conversation_id = c.id
        ) ra ON true
        WHERE c.account_id = ${a} AND c.created_at >= '2026-05-02' AND c.created_at < '2026-06-01'`,
    );
    console.log(
      JSON.stringify({
        plan: "30 days, the per-conversation responses probe (rollupRows' lateral)",
        lines: plan.map((r) => r['QUERY PLAN'].trim()).filter((l) => /Scan|Execution/.test(l)),
      }),
    );
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
