/**
 * Incremental sync on a large account: N responses and N/5 conversations (default 300,000 and
 * 60,000) spread over a year, of which 200 of each changed in the last minutes; then the list
 * (page 1 with its count) and the export with `updated_since`, timed through the direct door, and
 * the plans PostgreSQL chooses for the window and its count; and the time migration 0011's index
 * takes to build on such a table. Prints JSON lines.
 *   TEST_DB=postgres DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> node --import tsx tests/bench/sync-bench.ts [N]
 */
import { sql } from 'drizzle-orm';
import os from 'node:os';
import { getDb, rows } from '../../db/client';
import { createTestAccount, newChannelIds } from '../helpers/builders';
import { startTestServer } from '../helpers/server';

const N = Number(process.argv[2] ?? 300_000);
const CHANGED = 200;

async function timed(url: string, key: string, runs = 5) {
  const ms: number[] = [];
  let body = '';
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    body = await res.text();
    ms.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 200)}`);
  }
  ms.sort((a, b) => a - b);
  const lines = body.startsWith('{"count"') ? (JSON.parse(body) as { count: number }).count : body.split('\n').filter(Boolean).length;
  return { url: url.replace(/^.*customer-api\/v2/, ''), records: lines, median_ms: +ms[Math.floor(runs / 2)]!.toFixed(1), min_ms: +ms[0]!.toFixed(1) };
}

async function plan(db: Awaited<ReturnType<typeof getDb>>, statement: ReturnType<typeof sql>) {
  const out = await rows<{ 'QUERY PLAN': string }>(db, sql`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${statement}`);
  return out
    .map((r) => r['QUERY PLAN'])
    .filter((l) => /Scan|Execution Time|Sort|Limit/.test(l))
    .map((l) => l.trim());
}

async function main() {
  const server = await startTestServer();
  try {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const db = await getDb();
    const a = acct.accountId;
    const t0 = performance.now();
    const convs = Math.max(1, Math.floor(N / 5));
    await db.execute(sql`INSERT INTO channels (id, account_id, name) VALUES (${ch!}, ${a}, 'Bench')`);
    await db.execute(sql`
      INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at)
      SELECT gen_random_uuid(), ${a}, ${ch!}, 'Conversation ' || i, 'Open',
        timestamptz '2025-01-01' + (i % 31536000) * interval '1 second', timestamptz '2025-01-01' + (i % 31536000) * interval '1 second'
      FROM generate_series(1, ${convs}) i`);
    await db.execute(sql`
      INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, created_at, updated_at)
      WITH cs AS (SELECT array_agg(id) AS ids, array_agg(created_at) AS ats FROM conversations WHERE account_id = ${a})
      SELECT gen_random_uuid(), ${a}, cs.ids[1 + i % ${convs}], ${ch!}, 'Question ' || i, 'Answer ' || i,
        cs.ats[1 + i % ${convs}] + (i / ${convs}) * interval '1 minute', NULL -- rows older than the column: changed at created_at
      FROM generate_series(1, ${N}) i, cs`);
    // What a day of widget activity leaves: a few hundred answers and likes since the last sync.
    await db.execute(sql`UPDATE responses SET likes = likes + 1, updated_at = now() WHERE id IN (
      SELECT id FROM responses WHERE account_id = ${a} ORDER BY random() LIMIT ${CHANGED})`);
    await db.execute(sql`UPDATE conversations SET updated_at = now() WHERE id IN (
      SELECT id FROM conversations WHERE account_id = ${a} ORDER BY random() LIMIT ${CHANGED})`);
    await db.execute(sql`UPDATE accounts SET response_count = ${N}, conversation_count = ${convs} WHERE id = ${a}`);
    await db.execute(sql`VACUUM (ANALYZE) responses`);
    // What migration 0011 costs on this table: building its index (adding the column rewrites nothing).
    const ti = performance.now();
    await db.execute(sql`CREATE INDEX bench_changed_idx ON responses (account_id, COALESCE(updated_at, created_at), id)`);
    const indexSeconds = +((performance.now() - ti) / 1000).toFixed(1);
    await db.execute(sql`DROP INDEX bench_changed_idx`);
    await db.execute(sql`VACUUM (ANALYZE) conversations`);
    const [{ since }] = (await rows<{ since: string }>(
      db,
      sql`SELECT to_char((now() - interval '10 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS since`,
    )) as [{ since: string }];
    console.log(
      JSON.stringify({
        responses: N,
        conversations: convs,
        changed_each: CHANGED,
        migration_index_s: indexSeconds,
        setup_s: +((performance.now() - t0) / 1000).toFixed(1),
        machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`,
        loadavg: os.loadavg().map((x) => +x.toFixed(1)),
        db: server.kind,
      }),
    );
    const base = `${server.url}/customer-api/v2`;
    const q = `updated_since=${encodeURIComponent(since)}`;
    for (const path of [
      `/response?${q}`,
      `/response?${q}&order_by=likes`,
      `/response/export?${q}`,
      `/conversation?${q}`,
      `/conversation/export?${q}&include=messages`,
      '/response?query=Question%2012345',
    ]) {
      console.log(JSON.stringify(await timed(`${base}${path}`, acct.key)));
    }
    const window = sql`r.account_id = ${a} AND COALESCE(r.updated_at, r.created_at) >= (${since}::timestamp AT TIME ZONE 'UTC')`;
    console.log(
      JSON.stringify({
        plan: 'response window, page 1 by created_at',
        lines: await plan(
          db,
          sql`
      SELECT r.id FROM responses r WHERE ${window} ORDER BY r.created_at DESC, r.id DESC LIMIT 15`,
        ),
      }),
    );
    console.log(JSON.stringify({ plan: 'response window count', lines: await plan(db, sql`SELECT count(*) FROM responses r WHERE ${window}`) }));
    console.log(
      JSON.stringify({
        plan: 'conversation window count',
        lines: await plan(
          db,
          sql`
      SELECT count(*) FROM conversations c WHERE c.account_id = ${a} AND c.updated_at >= (${since}::timestamp AT TIME ZONE 'UTC')`,
        ),
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
