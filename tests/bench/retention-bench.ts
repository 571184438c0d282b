/**
 * Retention on PostgreSQL (docs/contracts.md §18): N expired conversations (default 100,000, over 100 days) with R
 * responses each (default 10: 1M) in one account, deleted by the server's retention job, while the
 * Customer API lists another account's conversations. Reports the deletion rate, the other account's
 * list p99 idle and during the deletion (goal ≤ 2×), the other account's writes idle and during it
 * (a conversation with a response, and an update, back to back on a connection of their own: the
 * longest stall, goal ≤ 100 ms), and the tables' sizes (heap and indexes) before, after the
 * deletion, after VACUUM, and after a tenth as many rows are written again (space reused). Prints JSON lines.
 *   createdb -h 127.0.0.1 -U postgres retention_bench && TEST_DB=postgres \
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/retention_bench npm run bench:retention -- [N] [R]
 */
import os from 'node:os';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { getDb, rows, type Db } from '../../db/client';
import { CLI } from '../../lib/audit/contract';
import { setRetention } from '../../lib/privacy/retention';
import { createTestAccount, newChannelIds } from '../helpers/builders';
import { startTestServer } from '../helpers/server';

const N = Number(process.argv[2] ?? 100_000);
const R = Number(process.argv[3] ?? 10);
const TABLES = ['conversations', 'responses', 'conversation_events', 'attachments'];

/** N conversations of the account created `age` days ago, R responses each, a generate_series per 20,000. */
async function load(db: Db, accountId: number, channelId: number, n: number, age: number) {
  await db.execute(sql`INSERT INTO channels (id, account_id, name) VALUES (${channelId}, ${accountId}, 'Bench') ON CONFLICT DO NOTHING`);
  const BATCH = 20_000;
  for (let lo = 1; lo <= n; lo += BATCH) {
    const hi = Math.min(n, lo + BATCH - 1);
    await db.transaction(async (tx) => {
      await tx.execute(sql`SET LOCAL statement_timeout = 0`);
      await tx.execute(sql`
        WITH c AS (
          INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at, visitor_id)
          SELECT gen_random_uuid(), ${accountId}, ${channelId}, 'Conversation ' || i, 'Resolved', t, t, 'v' || i
          FROM generate_series(${lo}::int, ${hi}::int) i,
            LATERAL (SELECT now() - (${age}::int + i % 100) * interval '1 day' - (i % 86400) * interval '1 second' AS t) s
          RETURNING id, created_at
        ), r AS (
          INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, created_at, likes)
          SELECT gen_random_uuid(), ${accountId}, c.id, ${channelId}, 'Where is my parcel number ' || k || '?',
            'It left our warehouse yesterday and should arrive within two working days.', c.created_at + k * interval '1 second', (k % 5 = 0)::int
          FROM c, generate_series(1, ${R}::int) k
          RETURNING 1
        ), e AS (
          INSERT INTO conversation_events (conversation_id, seq, kind, payload) SELECT id, 1, 'question', '{"text":"Where is my parcel?"}'::jsonb FROM c RETURNING 1
        )
        SELECT (SELECT count(*) FROM r) + (SELECT count(*) FROM e)`);
      await tx.execute(sql`
        UPDATE channels SET conversation_count = conversation_count + ${hi - lo + 1}, response_count = response_count + ${(hi - lo + 1) * R}
        WHERE account_id = ${accountId} AND id = ${channelId}`);
      await tx.execute(sql`
        UPDATE accounts SET conversation_count = conversation_count + ${hi - lo + 1}, response_count = response_count + ${(hi - lo + 1) * R} WHERE id = ${accountId}`);
    });
  }
}

/** Each table's size in MB: all of it, its heap, its indexes (the rest is TOAST). */
async function sizes(db: Db): Promise<Record<string, { total: number; heap: number; indexes: number }>> {
  const out: Record<string, { total: number; heap: number; indexes: number }> = {};
  for (const t of TABLES) {
    const [r] = await rows<{ total: number; heap: number; indexes: number }>(
      db,
      sql`SELECT round(pg_total_relation_size(${t}::regclass) / 1048576.0, 1)::float8 AS total, round(pg_relation_size(${t}::regclass) / 1048576.0, 1)::float8 AS heap,
            round(pg_indexes_size(${t}::regclass) / 1048576.0, 1)::float8 AS indexes`,
    );
    out[t] = r!;
  }
  return out;
}

/** The other account writing back to back on a connection of its own until `until` says stop: each write's time. */
async function writeUntil(url: string, accountId: number, channelId: number, until: () => boolean): Promise<number[]> {
  const w = postgres(url, { max: 1, onnotice: () => {} });
  const ms: number[] = [];
  try {
    while (!until()) {
      const t = performance.now();
      await w`WITH c AS (
          INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at, visitor_id)
          VALUES (gen_random_uuid(), ${accountId}, ${channelId}, 'Written during retention', 'Open', now(), now(), 'writer')
          RETURNING id
        ) INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, created_at, likes)
        SELECT gen_random_uuid(), ${accountId}, c.id, ${channelId}, 'Is it still there?', 'Yes.', now(), 0 FROM c`;
      await w`UPDATE conversations SET updated_at = now() WHERE account_id = ${accountId} AND id = (SELECT id FROM conversations WHERE account_id = ${accountId} AND visitor_id = 'v1')`;
      ms.push(performance.now() - t);
    }
  } finally {
    await w.end();
  }
  return ms;
}

const writes = (ms: number[]) => ({
  writes: ms.length,
  p50_ms: p(ms, 0.5),
  p99_ms: p(ms, 0.99),
  max_ms: +Math.max(...ms).toFixed(1),
  over_100_ms: ms.filter((x) => x > 100).length,
});

function p(ms: number[], q: number): number {
  const s = [...ms].sort((a, b) => a - b);
  return +(s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0).toFixed(1);
}

/** Lists the other account's conversations (newest first, 50 a page) back to back until `until` says stop. */
async function listUntil(url: string, key: string, until: () => boolean): Promise<number[]> {
  const ms: number[] = [];
  let page = 0;
  while (!until()) {
    const t = performance.now();
    const res = await fetch(`${url}/customer-api/v2/conversation?order_by=updated_at&page_size=50&page=${1 + (page++ % 20)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await res.text();
    if (res.status !== 200) throw new Error(`list: ${res.status}`);
    ms.push(performance.now() - t);
  }
  return ms;
}

async function remaining(db: Db, accountId: number): Promise<number> {
  const [r] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM conversations WHERE account_id = ${accountId}`);
  return r!.n;
}

async function main() {
  if (process.env.TEST_DB !== 'postgres') throw new Error('the retention bench runs on PostgreSQL: TEST_DB=postgres DATABASE_URL=…');
  const server = await startTestServer({ RETENTION_INTERVAL_SECONDS: '86400' });
  try {
    const db = await getDb();
    const expired = await createTestAccount('Expiring');
    const reader = await createTestAccount('Reading');
    const [ch1, ch2] = (await newChannelIds(2)) as [number, number];
    let t = performance.now();
    await load(db, expired.accountId, ch1, N, 400);
    await load(db, reader.accountId, ch2, 20_000, 1);
    await db.execute(sql`ANALYZE`);
    console.log(JSON.stringify({ step: 'load', conversations: N, responses: N * R, seconds: +((performance.now() - t) / 1000).toFixed(1) }));
    const before = await sizes(db);

    const idleEnd = performance.now() + 15_000;
    const [idle, idleWrites] = await Promise.all([
      listUntil(server.url, reader.key, () => performance.now() > idleEnd),
      writeUntil(process.env.DATABASE_URL!, reader.accountId, ch2, () => performance.now() > idleEnd),
    ]);

    let done = false;
    t = performance.now();
    const during = listUntil(server.url, reader.key, () => done);
    const duringWrites = writeUntil(process.env.DATABASE_URL!, reader.accountId, ch2, () => done);
    await setRetention(CLI, expired.accountId, { days: 30 });
    while ((await remaining(db, expired.accountId)) > 0) await new Promise((r) => setTimeout(r, 250));
    const seconds = (performance.now() - t) / 1000;
    done = true;
    const busy = await during;
    const busyWrites = await duringWrites;
    const afterDelete = await sizes(db);
    const figures = {
      machine: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
      load_average: os.loadavg().map((l) => +l.toFixed(1)),
      date: new Date().toISOString(),
      conversations: N,
      responses: N * R,
      deletion_seconds: +seconds.toFixed(1),
      conversations_per_second: Math.round(N / seconds),
      other_list_idle: { requests: idle.length, p50_ms: p(idle, 0.5), p99_ms: p(idle, 0.99) },
      other_list_during: { requests: busy.length, p50_ms: p(busy, 0.5), p99_ms: p(busy, 0.99) },
      p99_ratio: +(p(busy, 0.99) / p(idle, 0.99)).toFixed(2),
      other_writes_idle: writes(idleWrites),
      other_writes_during: writes(busyWrites),
    };
    console.log(JSON.stringify(figures));
    // VACUUM outside the app's pool (no statement timeout, no transaction).
    const admin = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin`SET statement_timeout = 0`;
    await admin.unsafe(`VACUUM ${TABLES.join(', ')}`);
    const afterVacuum = await sizes(db);
    // A tenth as many written again into the vacuumed tables: reused space, not growth.
    await setRetention(CLI, expired.accountId, { days: null });
    await load(db, expired.accountId, ch1, Math.round(N / 10), 400);
    const rewritten = await sizes(db);
    await admin.end();
    console.log(JSON.stringify({ sizes_mb: { before, after_delete: afterDelete, after_vacuum: afterVacuum, after_rewriting_a_tenth: rewritten } }));
  } finally {
    await server.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
