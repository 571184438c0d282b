/**
 * The insights rollup (insights_daily, docs/decisions/insights.md) against the same figures computed
 * live from the conversations and responses: equal after every kind of change made days after a
 * conversation's creation day, for two accounts on the same days, under concurrent refreshes, and
 * after every bulk path (import, counters, status change, delete, demo seed); the triggers' work
 * grows linearly with the rows a statement writes; one account's failed refresh never stops the next one's.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { getDb, migrationsFolder, rows, type Db } from '../../db/client';
import { toggleFeedback } from '../../db/queries/chat';
import { getInsightsFigures, getLiveInsightsFigures, refreshDirtyInsights, type InsightsWindow } from '../../db/queries/insights';
import { createAdminUser } from '../../lib/accounts/service';
import { seedDemoAccount } from '../../lib/demo/seed';
import { rateConversation, replyAsMember, requestHandoff, resolveConversation, takeOver } from '../../lib/conversations/handoff';
import type { Member } from '../../lib/conversations/handoff-contract';
import { V2 } from '../helpers/api-fixtures';
import {
  api,
  conversationLine,
  createTestAccount,
  importLines,
  newChannelIds,
  responseLine,
  type ConversationLine,
  type TestAccount,
} from '../helpers/builders';
import { migrationIndex, openScratchDatabase, partialMigrations } from '../helpers/migrations';
import { startTestServer, type TestServer } from '../helpers/server';

const dayAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
const at = (n: number, time: string) => `${dayAgo(n)} ${time}`;
const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

type World = { acct: TestAccount; ch: [number, number]; member: Member; convs: Map<string, ConversationLine>; responses: Map<string, string> };

let server: TestServer;
let db: Db;
let a: World;
let b: World;

/** A week of conversations of one account: some open, some resolved, rated, liked; one created today (read live). */
async function world(name: string): Promise<World> {
  const acct = await createTestAccount(name);
  const ch = (await newChannelIds(2)) as [number, number];
  const u = await createAdminUser(CLI, { accountId: acct.accountId, email: `m-${randomUUID()}@example.test`, password: 'member password 1', role: 'agent' });
  const member: Member = { accountId: acct.accountId, userId: u.user_id, role: 'agent' };
  const convs = new Map<string, ConversationLine>();
  const responses = new Map<string, string>();
  const lines: object[] = [];
  const add = (key: string, day: number, channel: number, status: string, extra: Record<string, unknown> = {}, likes = 0) => {
    const c = conversationLine({ channel_id: channel, created_at: at(day, '10:00:00'), updated_at: at(day, '10:05:00'), status, ...extra });
    const r = responseLine(c, { created_at: day === 0 ? stamp(Date.now() - 30_000) : at(day, '10:01:00'), likes });
    convs.set(key, c);
    responses.set(key, r.response_id);
    lines.push(c, r);
  };
  add('open5', 5, ch[0], 'Open');
  add('resolved5', 5, ch[1], 'Resolved', { resolved_at: at(5, '10:20:00'), csat: 4 }, 1);
  add('open4', 4, ch[0], 'Open');
  add('closed4', 4, ch[1], 'Closed', { csat: 2 });
  add('open3', 3, ch[0], 'Open');
  add('resolved3', 3, ch[0], 'Resolved', { resolved_at: at(3, '11:00:00') }, 2);
  add('open2', 2, ch[1], 'Open');
  add('today', 0, ch[0], 'Open', { created_at: stamp(Date.now() - 60_000), updated_at: stamp(Date.now()) });
  await importLines(acct.accountId, lines);
  return { acct, ch, member, convs, responses };
}

const WINDOWS = (w: World): InsightsWindow[] => [
  { from: dayAgo(7), to: dayAgo(0), channelId: null },
  { from: dayAgo(7), to: dayAgo(1), channelId: null },
  { from: dayAgo(4), to: dayAgo(4), channelId: null },
  { from: dayAgo(7), to: dayAgo(0), channelId: w.ch[0] },
  { from: dayAgo(7), to: dayAgo(0), channelId: w.ch[1] },
];

/** Every window of the account: the rollup's figures (refreshing what is dirty) equal the live computation. */
async function assertRollupIsLive(w: World, label: string) {
  await assertWindowsLive(w.acct.accountId, WINDOWS(w), label);
}

async function assertWindowsLive(accountId: number, windows: InsightsWindow[], label: string) {
  for (const win of windows) {
    const rolled = await getInsightsFigures(db, accountId, win);
    const live = await getLiveInsightsFigures(db, accountId, win);
    assert.deepEqual(rolled, live, `${label}: ${JSON.stringify(win)}`);
  }
}

/** `n` conversations over days 1–6 on two channels, each with `perConversation` responses; some resolved, rated, disliked. */
async function bulkAccount(name: string, n: number, perConversation: number) {
  const acct = await createTestAccount(name);
  const ch = (await newChannelIds(2)) as [number, number];
  const lines: object[] = [];
  for (let i = 0; i < n; i++) {
    const day = 1 + (i % 6);
    const resolved = i % 3 === 0;
    const c = conversationLine({
      channel_id: ch[i % 2]!,
      created_at: at(day, `10:${String(i % 60).padStart(2, '0')}:00`),
      updated_at: at(day, '11:00:00'),
      status: resolved ? 'Resolved' : 'Open',
      ...(resolved ? { resolved_at: at(day, '12:00:00'), csat: 1 + (i % 5) } : {}),
    } as Parameters<typeof conversationLine>[0]);
    lines.push(c);
    for (let j = 0; j < perConversation; j++)
      lines.push(responseLine(c, { created_at: at(day, '10:59:00'), likes: j % 2, dislikes: i % 7 === 0 && j === 0 ? 1 : 0 }));
  }
  await importLines(acct.accountId, lines);
  const windows: InsightsWindow[] = [
    { from: dayAgo(7), to: dayAgo(0), channelId: null },
    { from: dayAgo(3), to: dayAgo(3), channelId: null },
    { from: dayAgo(7), to: dayAgo(0), channelId: ch[0] },
    { from: dayAgo(7), to: dayAgo(0), channelId: ch[1] },
  ];
  return { acct, ch, windows };
}

const pastMarks = async (accountId: number) =>
  (
    await rows<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM insights_dirty_days WHERE account_id = ${accountId} AND day < (now() AT TIME ZONE 'UTC')::date`,
    )
  )[0]!.n;

/** The inbox counts (conversation_counts, kept by triggers) equal a recount of the account's conversations. */
async function assertCountsExact(accountId: number, label: string) {
  const q = (from: 'kept' | 'recount') =>
    rows<{ k: string; n: number }>(
      db,
      from === 'kept'
        ? sql`SELECT status || '/' || handled_by || '/' || assignee_id AS k, n::int AS n FROM conversation_counts WHERE account_id = ${accountId} AND n <> 0 ORDER BY 1`
        : sql`SELECT status || '/' || handled_by || '/' || COALESCE(assignee_id, 0) AS k, count(*)::int AS n FROM conversations WHERE account_id = ${accountId} GROUP BY 1 ORDER BY 1`,
    );
  assert.deepEqual(await q('kept'), await q('recount'), `inbox counts, ${label}`);
}

type PlanNode = { 'Actual Rows'?: number; 'Actual Loops'?: number; Plans?: PlanNode[] };
/** Rows produced by every node of a plan, each loop counted: the work a statement did, without a clock. */
const rowsProduced = (p: PlanNode): number => (p['Actual Rows'] ?? 0) * (p['Actual Loops'] ?? 1) + (p.Plans ?? []).reduce((s, c) => s + rowsProduced(c), 0);

const totalOf = async (w: World, win = WINDOWS(w)[0]!) => (await getInsightsFigures(db, w.acct.accountId, win)).find((r) => r.day === null)!;
const id = (w: World, key: string) => w.convs.get(key)!.conversation_id;

/** Runs `lock` in a transaction of another connection (another instance) and holds it until `release` (which may be called twice). */
async function holdElsewhere(lock: (tx: postgres.TransactionSql) => Promise<unknown>): Promise<{ release: () => Promise<void> }> {
  const other = postgres(process.env.DATABASE_URL!, { max: 1 });
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const holding = new Promise<void>((r) => (locked = r));
  const holder = other.begin(async (tx) => {
    await lock(tx);
    locked();
    await released;
  });
  await Promise.race([holding, holder]);
  return {
    release: async () => {
      release();
      await holder.catch(() => {});
      await other.end();
    },
  };
}

before(
  async () => {
    server = await startTestServer();
    db = await getDb();
    a = await world('Rollup A');
    b = await world('Rollup B');
  },
  { timeout: 120_000 },
);
after(async () => {
  await server?.close();
});

describe('insights rollup', () => {
  it('equals the live figures, for each account, and the API reads it', async () => {
    await assertRollupIsLive(a, 'first read A');
    await assertRollupIsLive(b, 'first read B');
    const total = await totalOf(a);
    assert.equal(total.conversations, 8);
    const stored = await rows<{ account_id: number; n: number }>(
      db,
      sql`SELECT account_id, sum(conversations)::int AS n FROM insights_daily WHERE channel_id = 0 AND account_id IN (${a.acct.accountId}, ${b.acct.accountId}) GROUP BY 1 ORDER BY 1`,
    );
    assert.deepEqual(
      stored.map((r) => r.n),
      [7, 7],
      'the past 7 conversations of each account are rolled up (today is read live)',
    );
    const marks = await rows<{ past: number; today: number }>(
      db,
      sql`SELECT count(*) FILTER (WHERE day < (now() AT TIME ZONE 'UTC')::date)::int AS past, count(*) FILTER (WHERE day >= (now() AT TIME ZONE 'UTC')::date)::int AS today
        FROM insights_dirty_days WHERE account_id = ${a.acct.accountId}`,
    );
    assert.deepEqual({ ...marks[0] }, { past: 0, today: 1 }, 'read past days are clean; today keeps one mark');
    const res = await api(server.url, a.acct.key)(`${V2}/insights?from=${dayAgo(7)}&to=${dayAgo(0)}`);
    assert.equal(res.status, 200);
    const rec = res.body as { conversations: number; ai_resolved: number; likes: number };
    assert.deepEqual([rec.conversations, rec.ai_resolved, rec.likes], [total.conversations, total.ai_resolved, total.likes]);
  });

  it('follows a handoff, a first reply, a resolve and a rating days after the creation day', async () => {
    await assertRollupIsLive(a, 'before');
    const before = await totalOf(a);
    const conv = id(a, 'open4');
    await requestHandoff({ accountId: a.acct.accountId, conversationId: conv });
    await assertRollupIsLive(a, 'handed off');
    await takeOver(a.member, { conversation_id: conv });
    await replyAsMember(a.member, { conversation_id: conv, text: 'Hello, I am here.' });
    await assertRollupIsLive(a, 'first reply');
    await resolveConversation(a.member, { conversation_id: conv });
    await assertRollupIsLive(a, 'resolved');
    await rateConversation({ accountId: a.acct.accountId, conversationId: conv }, { rating: 5 });
    await assertRollupIsLive(a, 'rated');
    const now = await totalOf(a);
    assert.equal(now.handoffs, before.handoffs + 1);
    assert.equal(now.csat_human_responses, before.csat_human_responses + 1);
    assert.notEqual(now.median_first_response_seconds, null);
  });

  it('follows a dislike, a declined answer, a re-import and a deletion', async () => {
    await assertRollupIsLive(a, 'before');
    const aiBefore = (await totalOf(a)).ai_resolved;
    await toggleFeedback(db, a.acct.accountId, a.responses.get('resolved3')!, `visitor-${randomUUID()}`, -1);
    await assertRollupIsLive(a, 'disliked');
    assert.equal((await totalOf(a)).ai_resolved, aiBefore - 1, 'a dislike on day 3 takes its conversation out of AI-resolved');
    await db.execute(sql`UPDATE responses SET declined = true WHERE id = ${a.responses.get('open3')!}`);
    await assertRollupIsLive(a, 'declined');
    const line = a.convs.get('open2')!;
    await importLines(a.acct.accountId, [{ ...line, status: 'Resolved', resolved_at: at(2, '12:00:00'), csat: 3 }]);
    await assertRollupIsLive(a, 're-imported');
    await db.transaction(async (tx) => {
      await tx.execute(sql`DELETE FROM responses WHERE conversation_id = ${id(a, 'resolved5')}`);
      await tx.execute(sql`DELETE FROM conversation_messages WHERE conversation_id = ${id(a, 'resolved5')}`);
      await tx.execute(sql`DELETE FROM conversations WHERE id = ${id(a, 'resolved5')}`);
    });
    await assertRollupIsLive(a, 'deleted');
    await assertRollupIsLive(b, 'the other account');
  });

  it('follows a thanks, its rewording, a declined answer and a like days later (confirmed and assumed)', async () => {
    await assertRollupIsLive(a, 'before');
    const before = await totalOf(a);
    const thanks = responseLine(a.convs.get('open5')!, { question: 'Thanks a lot!', created_at: at(5, '10:03:00') });
    await importLines(a.acct.accountId, [a.convs.get('open5')!, thanks]);
    await assertRollupIsLive(a, 'thanked');
    const thanked = await totalOf(a);
    assert.deepEqual(
      [thanked.ai_resolved, thanked.ai_resolved_confirmed, thanked.ai_involved],
      [before.ai_resolved, before.ai_resolved_confirmed + 1, before.ai_involved],
      'a thanks after an answer confirms its AI-resolved conversation',
    );
    await db.execute(sql`UPDATE responses SET question = 'Thanks, but why?' WHERE id = ${thanks.response_id}`);
    await assertRollupIsLive(a, 'reworded');
    assert.equal((await totalOf(a)).ai_resolved_confirmed, before.ai_resolved_confirmed, 'a question with a negation is no thanks');
    await db.execute(sql`UPDATE responses SET question = 'Thanks a lot!' WHERE id = ${thanks.response_id}`);
    await db.execute(sql`UPDATE responses SET declined = true WHERE id = ${a.responses.get('open5')!}`);
    await assertRollupIsLive(a, 'answer declined');
    assert.equal((await totalOf(a)).ai_resolved_confirmed, before.ai_resolved_confirmed, 'a thanks after a declined answer confirms nothing');
    await toggleFeedback(db, a.acct.accountId, a.responses.get('closed4')!, `visitor-${randomUUID()}`, 1);
    await assertRollupIsLive(a, 'liked');
    assert.equal((await totalOf(a)).ai_resolved_confirmed, before.ai_resolved_confirmed + 1, 'a like confirms its AI-resolved conversation');
  });

  it("never mixes the other account's rows in", async () => {
    const aBefore = await Promise.all(WINDOWS(a).map((w) => getInsightsFigures(db, a.acct.accountId, w)));
    // B changes the same days (and channel numbers need not differ between accounts).
    await requestHandoff({ accountId: b.acct.accountId, conversationId: id(b, 'open5') });
    await toggleFeedback(db, b.acct.accountId, b.responses.get('resolved3')!, `visitor-${randomUUID()}`, -1);
    await assertRollupIsLive(b, 'B changed');
    const aAfter = await Promise.all(WINDOWS(a).map((w) => getInsightsFigures(db, a.acct.accountId, w)));
    assert.deepEqual(aAfter, aBefore);
    await assertRollupIsLive(a, 'A after B changed');
  });

  it('an open conversation of a past day turns AI-resolved when it becomes idle, without any write', async () => {
    await db.execute(sql`UPDATE conversations SET updated_at = now() - interval '29 minutes 58 seconds' WHERE id = ${id(a, 'open3')}`);
    const win = { from: dayAgo(3), to: dayAgo(3), channelId: null };
    const first = (await getInsightsFigures(db, a.acct.accountId, win))[0]!;
    assert.deepEqual([first], (await getLiveInsightsFigures(db, a.acct.accountId, win)).slice(0, 1));
    await new Promise((r) => setTimeout(r, 3_000));
    const later = (await getInsightsFigures(db, a.acct.accountId, win))[0]!;
    assert.equal(later.ai_resolved, first.ai_resolved + 1, 'idle 30 minutes now');
    assert.deepEqual([later], (await getLiveInsightsFigures(db, a.acct.accountId, win)).slice(0, 1));
  });

  it('concurrent reads refresh safely while conversations change', async () => {
    const keys = ['open5', 'closed4', 'open3', 'open2'];
    let round = 0;
    const writes = async () => {
      for (const key of keys) {
        round++;
        await db.execute(
          sql`UPDATE conversations SET csat = ${1 + (round % 5)}, updated_at = ${at(1, '09:00:00')}::timestamp AT TIME ZONE 'UTC' WHERE id = ${id(a, key)}`,
        );
        await db.execute(sql`UPDATE responses SET likes = likes + 1 WHERE id = ${a.responses.get(key)!}`);
      }
    };
    const reads = () => Promise.all(WINDOWS(a).flatMap((w) => [getInsightsFigures(db, a.acct.accountId, w), getInsightsFigures(db, b.acct.accountId, w)]));
    await Promise.all([reads(), writes(), refreshDirtyInsights(db, 100), reads(), writes(), refreshDirtyInsights(db, 100), reads()]);
    await assertRollupIsLive(a, 'after concurrent refreshes');
    await assertRollupIsLive(b, 'B after concurrent refreshes');
  });

  it('reads waiting for another refresh of their account hold no pooled connection', { skip: process.env.TEST_DB !== 'postgres' }, async () => {
    // Another instance's refresh holds account A's lock in a transaction of its own.
    const held = await holdElsewhere((tx) => tx`SELECT pg_advisory_xact_lock(hashtext('svc.insights'), ${a.acct.accountId})`);
    try {
      await db.execute(sql`UPDATE conversations SET csat = 3 WHERE id = ${id(a, 'closed4')}`);
      // Three times the pool's connections (DATABASE_POOL_SIZE, 10 by default) read A's insights at once.
      const reads = Array.from({ length: 30 }, () => getInsightsFigures(db, a.acct.accountId, WINDOWS(a)[0]!));
      const t = Date.now();
      const served = await Promise.race([
        getInsightsFigures(db, b.acct.accountId, WINDOWS(b)[0]!).then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), 5_000)),
      ]);
      assert.ok(served, `another account's insights waited ${Date.now() - t} ms behind the reads of A`);
      await held.release();
      const live = await getLiveInsightsFigures(db, a.acct.accountId, WINDOWS(a)[0]!);
      for (const figures of await Promise.all(reads)) assert.deepEqual(figures, live);
    } finally {
      await held.release();
    }
  });

  it('the background refresh rolls up past dirty days before a read', async () => {
    await db.execute(sql`UPDATE conversations SET csat = 1 WHERE id = ${id(b, 'closed4')}`);
    await refreshDirtyInsights(db, 1_000);
    const [marks] = await rows<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM insights_dirty_days WHERE account_id = ${b.acct.accountId} AND day < (now() AT TIME ZONE 'UTC')::date`,
    );
    assert.equal(marks!.n, 0);
    await assertRollupIsLive(b, 'after the background refresh');
  });

  it("one account's failed refresh does not keep the next account's from running", { skip: process.env.TEST_DB !== 'postgres' }, async () => {
    assert.ok(a.acct.accountId < b.acct.accountId, 'A is refreshed first');
    await db.execute(sql`UPDATE conversations SET csat = 2 WHERE id = ${id(a, 'closed4')}`);
    await db.execute(sql`UPDATE conversations SET csat = 4 WHERE id = ${id(b, 'closed4')}`);
    const pastMarks = async (w: World) =>
      (
        await rows<{ n: number }>(
          db,
          sql`SELECT count(*)::int AS n FROM insights_dirty_days WHERE account_id = ${w.acct.accountId} AND day < (now() AT TIME ZONE 'UTC')::date`,
        )
      )[0]!.n;
    assert.ok((await pastMarks(a)) > 0 && (await pastMarks(b)) > 0);
    // Another transaction holds A's dirty marks, so A's refresh fails on its lock timeout (as a statement cut by its timeout would).
    const held = await holdElsewhere((tx) => tx`SELECT 1 FROM insights_dirty_days WHERE account_id = ${a.acct.accountId} FOR UPDATE`);
    try {
      let failed: unknown = null;
      await db.transaction(async (tx) => {
        await tx.execute(sql`SET LOCAL lock_timeout = '300ms'`);
        failed = await refreshDirtyInsights(tx as unknown as Db, 1_000).then(
          () => null,
          (e: unknown) => e,
        );
      });
      assert.match(String((failed as { cause?: Error } | null)?.cause?.message), /lock timeout/, 'A failed on its lock timeout and said so');
      assert.equal(await pastMarks(b), 0, "B's days were refreshed after A's failed");
      await assertRollupIsLive(b, "B after A's failed refresh");
      assert.ok((await pastMarks(a)) > 0, "A's marks stay for the next pass");
    } finally {
      await held.release();
    }
    await refreshDirtyInsights(db, 1_000);
    await assertRollupIsLive(a, 'A on the next pass');
  });

  it('medians from the histogram: exact for small buckets, within 1 % otherwise', async () => {
    const acct = await createTestAccount('Rollup medians');
    const [ch] = await newChannelIds(1);
    const lines: object[] = [];
    // 40 resolution times of 1000–1039 s (several per 1 % bucket) and 7 of 30–36 s (whole seconds).
    for (let i = 0; i < 47; i++) {
      const secs = i < 40 ? 1000 + i : 30 + (i - 40);
      const created = Date.parse(`${dayAgo(2)}T08:00:00Z`) + i * 1000;
      lines.push(
        conversationLine({
          channel_id: ch!,
          status: 'Resolved',
          created_at: stamp(created),
          updated_at: stamp(created + 5_000),
          resolved_at: stamp(created + secs * 1000),
        } as Parameters<typeof conversationLine>[0]),
      );
    }
    await importLines(acct.accountId, lines);
    const win = { from: dayAgo(3), to: dayAgo(1), channelId: null };
    const [rolled] = await getInsightsFigures(db, acct.accountId, win);
    const [live] = await getLiveInsightsFigures(db, acct.accountId, win);
    assert.equal(rolled!.conversations, 47);
    const exact = live!.median_resolution_seconds!;
    assert.ok(Math.abs(rolled!.median_resolution_seconds! - exact) <= Math.max(1, exact * 0.01), `${rolled!.median_resolution_seconds} vs ${exact}`);
  });

  it('equals a full recount after each bulk path: import, counters, status change, responses update, move, delete', async () => {
    const { acct, ch, windows } = await bulkAccount('Rollup bulk', 240, 3);
    await assertWindowsLive(acct.accountId, windows, 'bulk import');
    await assertCountsExact(acct.accountId, 'bulk import');
    // The counters phase's kind of statement changes nothing insights reads: it marks no day.
    await db.execute(sql`UPDATE conversations SET response_count = response_count + 1 WHERE account_id = ${acct.accountId}`);
    assert.equal(await pastMarks(acct.accountId), 0, 'a counter update marks no day');
    await db.execute(sql`UPDATE conversations SET response_count = response_count - 1 WHERE account_id = ${acct.accountId}`);
    await db.execute(
      sql`UPDATE conversations SET status = 'Resolved', resolved_at = created_at + interval '2 hours', csat = 4 WHERE account_id = ${acct.accountId} AND channel_id = ${ch[0]} AND status = 'Open'`,
    );
    assert.ok((await pastMarks(acct.accountId)) > 0);
    await assertWindowsLive(acct.accountId, windows, 'bulk status change');
    await assertCountsExact(acct.accountId, 'bulk status change');
    await db.execute(sql`UPDATE responses SET dislikes = dislikes + 1, likes = 0 WHERE account_id = ${acct.accountId} AND channel_id = ${ch[1]}`);
    await assertWindowsLive(acct.accountId, windows, 'bulk responses update');
    await assertCountsExact(acct.accountId, 'bulk responses update');
    // Disliked responses of one day move to conversations of another day (same channel): both days change.
    await db.execute(sql`
      WITH src AS (SELECT id FROM conversations WHERE account_id = ${acct.accountId} AND channel_id = ${ch[1]} AND (created_at AT TIME ZONE 'UTC')::date = ${dayAgo(2)}::date),
           dst AS (SELECT id FROM conversations WHERE account_id = ${acct.accountId} AND channel_id = ${ch[1]} AND (created_at AT TIME ZONE 'UTC')::date = ${dayAgo(4)}::date ORDER BY id LIMIT 1)
      UPDATE responses SET conversation_id = (SELECT id FROM dst) WHERE conversation_id IN (SELECT id FROM src)`);
    await assertWindowsLive(acct.accountId, windows, 'bulk responses move');
    await assertCountsExact(acct.accountId, 'bulk responses move');
    await db.transaction(async (tx) => {
      const doomed = sql`SELECT id FROM conversations WHERE account_id = ${acct.accountId} AND channel_id = ${ch[0]}`;
      await tx.execute(sql`DELETE FROM responses WHERE conversation_id IN (${doomed})`);
      await tx.execute(sql`DELETE FROM conversation_messages WHERE conversation_id IN (${doomed})`);
      await tx.execute(sql`DELETE FROM conversations WHERE id IN (${doomed})`);
    });
    await assertWindowsLive(acct.accountId, windows, 'bulk delete');
    await assertCountsExact(acct.accountId, 'bulk delete');
  });

  it('migration 0026 marks every rolled-up day dirty: the first read after the upgrade fills the new figures', async () => {
    const before = partialMigrations(migrationIndex('_honest_resolution'));
    const scratch = await openScratchDatabase(server.kind);
    try {
      await scratch.migrateTo(before);
      const [c1, c2] = [randomUUID(), randomUUID()];
      const day = dayAgo(3);
      await scratch.exec(`INSERT INTO accounts (id, name) VALUES (1, 'One')`);
      await scratch.exec(`INSERT INTO channels (id, account_id, name) VALUES (1, 1, 'Web')`);
      await scratch.exec(`INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at)
        VALUES ('${c1}', 1, 1, 'thanked', 'Resolved', '${day} 10:00+00', '${day} 10:05+00'), ('${c2}', 1, 1, 'silent', 'Resolved', '${day} 11:00+00', '${day} 11:05+00')`);
      await scratch.exec(`INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, created_at) VALUES
        ('${randomUUID()}', 1, '${c1}', 1, 'Where is my order?', 'On the Orders page.', '${day} 10:01+00'),
        ('${randomUUID()}', 1, '${c1}', 1, 'Great, thanks!', 'You are welcome.', '${day} 10:02+00'),
        ('${randomUUID()}', 1, '${c2}', 1, 'Can I pay by invoice?', 'Yes, for annual plans.', '${day} 11:01+00')`);
      // The day as the old refresh stored it, its writers' marks gone.
      await scratch.exec(`DELETE FROM insights_dirty_days`);
      await scratch.exec(
        `INSERT INTO insights_daily (account_id, channel_id, day, conversations, ai_resolved) VALUES (1, 0, '${day}', 2, 2), (1, 1, '${day}', 2, 2)`,
      );
      await scratch.migrateTo(migrationsFolder());
      assert.deepEqual(await scratch.exec(`SELECT account_id, to_char(day, 'YYYY-MM-DD') AS day FROM insights_dirty_days`), [{ account_id: 1, day }]);
      const win: InsightsWindow = { from: day, to: day, channelId: null };
      const rolled = await getInsightsFigures(scratch.db, 1, win);
      assert.deepEqual(rolled, await getLiveInsightsFigures(scratch.db, 1, win));
      const total = rolled.find((r) => r.day === null)!;
      assert.deepEqual([total.ai_resolved, total.ai_involved, total.ai_resolved_confirmed], [2, 2, 1]);
    } finally {
      await scratch.close();
      fs.rmSync(before, { recursive: true, force: true });
    }
  });

  it('equals a full recount after the demo seed', { timeout: 120_000 }, async () => {
    const demo = await seedDemoAccount();
    const windows: InsightsWindow[] = [
      { from: dayAgo(40), to: dayAgo(0), channelId: null },
      { from: dayAgo(40), to: dayAgo(1), channelId: demo.channel_ids[0] },
      { from: dayAgo(40), to: dayAgo(0), channelId: demo.channel_ids[1] },
    ];
    await assertWindowsLive(demo.account_id, windows, 'demo seed');
  });

  // PL/pgSQL plans a trigger's statement once per session, sized by the transition tables of its first
  // call: after a one-row update, a join of old_rows and new_rows stayed a nested loop and a bulk update
  // in the same session went quadratic. Rows produced by the trigger statements (auto_explain, no clock)
  // may at most double (+20 %) when the statement's rows double. auto_explain ships with PostgreSQL;
  // the embedded build registers only pg_trgm.
  it('the triggers of a bulk update do linear work', { skip: process.env.TEST_DB !== 'postgres' ? 'auto_explain: PostgreSQL only' : false }, async () => {
    const { acct } = await bulkAccount('Rollup scaling', 800, 1);
    const notices: string[] = [];
    const pg = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: (n) => notices.push(String(n.message)) });
    try {
      await pg.unsafe(`LOAD 'auto_explain'`);
      for (const [k, v] of Object.entries({
        log_min_duration: '0',
        log_analyze: 'on',
        log_timing: 'off',
        log_nested_statements: 'on',
        log_format: 'json',
        log_level: 'notice',
      })) {
        await pg.unsafe(`SET auto_explain.${k} = '${v}'`);
      }
      const triggerWork = async (statement: string, n: number) => {
        notices.length = 0;
        await pg
          .begin(async (tx) => {
            await tx.unsafe(statement, [acct.accountId, n]);
            throw new Error('rollback');
          })
          .catch((e: Error) => {
            if (e.message !== 'rollback') throw e;
          });
        const plans = notices
          .map((m) => JSON.parse(m.slice(m.indexOf('{'))) as { 'Query Text': string; Plan: PlanNode })
          .filter((p) => /insights_dirty_days|conversation_counts/.test(p['Query Text']));
        assert.ok(plans.length > 0, 'the trigger statement was explained');
        return plans.reduce((s, p) => s + rowsProduced(p.Plan), 0);
      };
      const statements = [
        `UPDATE conversations SET response_count = response_count + 1 WHERE id IN (SELECT id FROM conversations WHERE account_id = $1 ORDER BY id LIMIT $2)`,
        `UPDATE conversations SET status = 'Closed' WHERE id IN (SELECT id FROM conversations WHERE account_id = $1 ORDER BY id LIMIT $2)`,
        `UPDATE responses SET likes = likes + 1, dislikes = 1 WHERE id IN (SELECT id FROM responses WHERE account_id = $1 ORDER BY id LIMIT $2)`,
      ];
      // Every trigger of a bulk update runs once per statement: a per-row trigger upserting the same
      // counts row n times walks that row's growing chain of versions (quadratic, 62 s at 40,000).
      const [explained] = await pg
        .begin(async (tx) => {
          const r = await tx.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${statements[1]!}`, [acct.accountId, 800]);
          throw Object.assign(new Error('rollback'), { r });
        })
        .catch((e: Error & { r?: Array<{ 'QUERY PLAN': Array<{ Triggers: Array<{ 'Trigger Name': string; Calls: number }> }> }> }) => {
          if (!e.r) throw e;
          return e.r;
        });
      const calls = explained!['QUERY PLAN'][0]!.Triggers.map((t) => [t['Trigger Name'], t.Calls]);
      assert.deepEqual(
        calls.filter(([, n]) => n !== 1),
        [],
        `triggers of an 800-row status change: ${JSON.stringify(calls)}`,
      );
      for (const statement of statements) {
        await triggerWork(statement, 1);
        const small = await triggerWork(statement, 400);
        const large = await triggerWork(statement, 800);
        assert.ok(large / small <= 2 * 1.2, `${statement.slice(0, 60)}…: ${small} rows produced at 400, ${large} at 800 (×${(large / small).toFixed(2)})`);
      }
    } finally {
      await pg.end();
    }
  });
});
