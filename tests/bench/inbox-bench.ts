/**
 * The inbox's views on a large account (issue 26: "Waiting" on an account with 1,000,000
 * conversations of which 100,000 wait must answer at p50 ≤ 20 ms). One account with N
 * conversations: 10 % Waiting, 30 % Open (a sixth of them with a person, assigned among 5
 * members), 5 % Snoozed, the rest Resolved; each Waiting one with a question. Then each view's
 * first page and a later page (cursor), and the five counts, through the service, RUNS times
 * each (median, p99), and the plans PostgreSQL picks.
 *
 *   TEST_DB=postgres DATABASE_URL=postgres://…/hc_bench node --import tsx tests/bench/inbox-bench.ts [N] [--reuse]
 */
import { sql } from 'drizzle-orm';
import { closeDatabase, getDb, rows } from '../../db/client';
import { inboxCounts, listInboxConversations } from '../../lib/conversations/inbox-views';
import type { Member } from '../../lib/conversations/handoff-contract';
import { createTestAccount } from '../helpers/builders';

const N = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const REUSE = process.argv.includes('--reuse');
const RUNS = 50;

async function dataset(): Promise<{ accountId: number; members: number[] }> {
  const db = await getDb();
  if (REUSE) {
    const [a] = await rows<{ account_id: number; n: number }>(
      db,
      sql`SELECT account_id, count(*)::int AS n FROM conversations GROUP BY account_id ORDER BY n DESC LIMIT 1`,
    );
    if (a && a.n >= N) {
      const m = await rows<{ id: number }>(db, sql`SELECT id FROM admin_users WHERE account_id = ${a.account_id} ORDER BY id`);
      return { accountId: a.account_id, members: m.map((x) => x.id) };
    }
  }
  const acct = await createTestAccount('Inbox bench');
  const accountId = acct.accountId;
  await db.execute(sql`INSERT INTO channels (id, account_id, name) VALUES (1, ${accountId}, 'Website')`);
  await db.execute(sql`
    INSERT INTO admin_users (account_id, email, password_hash, name, role, dashboard_seen_at)
    SELECT ${accountId}, 'member' || g || '-' || ${accountId} || '@bench.test', 'x', 'Member ' || g, 'agent', now() FROM generate_series(1, 5) g`);
  const members = (await rows<{ id: number }>(db, sql`SELECT id FROM admin_users WHERE account_id = ${accountId} ORDER BY id`)).map((m) => m.id);
  const t0 = Date.now();
  // i % 20: 0–1 Waiting, 2–7 Open (2 with a person), 8 Snoozed, the rest Resolved.
  await db.execute(sql`
    INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at, handled_by, assignee_id,
      waiting_since, resolved_at, snoozed_until, handed_off_at)
    SELECT gen_random_uuid(), ${accountId}, 1, 'Conversation ' || g,
      CASE WHEN g % 20 < 2 THEN 'Waiting' WHEN g % 20 < 8 THEN 'Open' WHEN g % 20 = 8 THEN 'Snoozed' ELSE 'Resolved' END,
      now() - make_interval(secs => g), now() - make_interval(secs => g / 2),
      CASE WHEN g % 20 < 3 OR g % 20 = 8 THEN 'human' ELSE 'ai' END,
      CASE WHEN g % 20 = 2 THEN (${sql.param(members)}::int[])[1 + g % 5] ELSE NULL END,
      CASE WHEN g % 20 < 2 THEN now() - make_interval(secs => g) END,
      CASE WHEN g % 20 > 8 THEN now() - make_interval(secs => g / 3) END,
      CASE WHEN g % 20 = 8 THEN now() + interval '1 day' END,
      CASE WHEN g % 20 < 3 OR g % 20 = 8 THEN now() - make_interval(secs => g) END
    FROM generate_series(1, ${N}) g`);
  await db.execute(sql`
    INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, created_at, updated_at)
    SELECT gen_random_uuid(), account_id, id, 1, 'Where is my parcel?', 'I could not find that.', created_at, created_at
    FROM conversations WHERE account_id = ${accountId} AND status = 'Waiting'`);
  await db.execute(sql`UPDATE accounts SET conversation_count = ${N} WHERE id = ${accountId}`);
  await db.execute(sql`VACUUM ANALYZE conversations`);
  await db.execute(sql`VACUUM ANALYZE responses`);
  console.log(`dataset: ${N} conversations in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { accountId, members };
}

function stats(ms: number[]): { p50: number; p99: number } {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)]!, p99: s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)]! };
}

async function time(fn: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 5; i++) await fn();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  return stats(ms);
}

async function main() {
  const { accountId, members } = await dataset();
  const member: Member = { accountId, userId: members[0]!, role: 'agent' };
  const db = await getDb();
  const out: string[] = ['| request | p50 ms | p99 ms |', '|---|---:|---:|'];
  for (const view of ['waiting', 'mine', 'unassigned', 'all_open', 'resolved'] as const) {
    const first = await listInboxConversations(member, { view });
    out.push(`| ${view}, page 1 (25) | ${fmt(await time(() => listInboxConversations(member, { view })))} |`);
    if (first.next_cursor) {
      const cursor = first.next_cursor;
      out.push(`| ${view}, page 2 (cursor) | ${fmt(await time(() => listInboxConversations(member, { view, cursor })))} |`);
    }
  }
  out.push(`| the five counts (one statement) | ${fmt(await time(() => inboxCounts(accountId, member.userId)))} |`);
  console.log(out.join('\n'));
  const plan = await rows<{ 'QUERY PLAN': string }>(
    db,
    sql`EXPLAIN (ANALYZE, BUFFERS) SELECT c.id FROM conversations c WHERE c.account_id = ${accountId} AND c.status = 'Waiting'
      ORDER BY c.waiting_since, c.id LIMIT 26`,
  );
  console.log(plan.map((p) => p['QUERY PLAN']).join('\n'));
  const countPlan = await rows<{ 'QUERY PLAN': string }>(
    db,
    sql`EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM conversations c WHERE c.account_id = ${accountId} AND c.status = 'Waiting'`,
  );
  console.log(countPlan.map((p) => p['QUERY PLAN']).join('\n'));
  await closeDatabase();
}

const fmt = (s: { p50: number; p99: number }) => `${s.p50.toFixed(2)} | ${s.p99.toFixed(2)}`;

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
