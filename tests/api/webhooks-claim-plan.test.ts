// One database: PostgreSQL — PostgreSQL's query plan on a 200k backlog
/**
 * The delivery claim on a 200k-row backlog (issue 23 item 3), PostgreSQL only: a paused endpoint
 * with 200,000 held deliveries and a failing endpoint with 20,000 waiting for their retry; the
 * claim's plan reads only indexes of webhook_deliveries (no Seq Scan) and one claim stays fast.
 * The data is written with generate_series; no server runs (nothing else claims meanwhile).
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createTestAccount } from '../helpers/builders';

const onPostgres = process.env.TEST_DB === 'postgres';
const HELD = 200_000;
const WAITING = 20_000;

describe('webhooks: the claim on a 200k backlog', { skip: !onPostgres && 'PostgreSQL only' }, () => {
  let accountId = 0;
  after(async () => {
    const { getDb, closeDatabase } = await import('../../db/client');
    const t0 = Date.now();
    if (accountId) await (await getDb()).execute(sql`DELETE FROM webhook_events WHERE account_id = ${accountId}`);
    console.log(`the backlog's events and deliveries deleted in ${Date.now() - t0} ms`);
    await closeDatabase();
  });

  it('uses the indexes (no Seq Scan on webhook_deliveries) and takes milliseconds', { timeout: 120_000 }, async () => {
    process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS = '1';
    const { getDb, rows } = await import('../../db/client');
    const { claimDueDeliveries, claimDueDeliveriesSql, expireHeldDeliveries, releaseLeasesExcept, releaseLeasesExceptSql } = await import(
      '../../db/queries/webhooks'
    );
    const { createWebhookEndpoint, setWebhookPaused } = await import('../../lib/webhooks/service');
    const rules = await import('../../lib/webhooks/rules');
    const db = await getDb();
    accountId = (await createTestAccount('Backlog Co')).accountId;
    const paused = await createWebhookEndpoint(CLI, { accountId, url: 'http://127.0.0.1:9/paused', events: ['conversation.created'] });
    const failing = await createWebhookEndpoint(CLI, { accountId, url: 'http://127.0.0.1:9/failing', events: ['conversation.created'] });
    const fine = await createWebhookEndpoint(CLI, { accountId, url: 'http://127.0.0.1:9/fine', events: ['conversation.created'] });
    await setWebhookPaused(CLI, accountId, paused.endpoint_id, true);

    // Ids in ascending order and, for a superuser, no per-row foreign-key checks: the 220k rows take seconds, not a minute.
    const started = Date.now();
    const run = randomBytes(4).toString('hex');
    const endpointOf = sql`CASE WHEN g <= ${HELD} THEN ${paused.endpoint_id}::uuid WHEN g <= ${HELD + WAITING} THEN ${failing.endpoint_id}::uuid ELSE ${fine.endpoint_id}::uuid END`;
    const conversationOf = sql`(${run} || '0' || lpad(to_hex(g), 23, '0'))::uuid`;
    await db.transaction(async (tx) => {
      const [su] = await rows<{ on: boolean }>(tx as unknown as typeof db, sql`SELECT current_setting('is_superuser') = 'on' AS on`);
      if (su!.on) await tx.execute(sql`SET LOCAL session_replication_role = replica`);
      await tx.execute(sql`
        INSERT INTO webhook_events (id, account_id, type, conversation_id, body)
        SELECT 'msg_' || ${run} || lpad(g::text, 8, '0'), ${accountId}, 'conversation.created', ${conversationOf}, '{}'
        FROM generate_series(1, ${HELD + WAITING + 3}) g`);
      await tx.execute(sql`
        INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, conversation_id, event_seq, status, attempts, next_attempt_at)
        SELECT (${run} || '1' || lpad(to_hex(g), 23, '0'))::uuid, ${accountId}, ${endpointOf}, 'msg_' || ${run} || lpad(g::text, 8, '0'), ${conversationOf}, g,
          CASE WHEN g <= ${HELD} THEN 'held' ELSE 'pending' END,
          CASE WHEN g <= ${HELD} OR g > ${HELD + WAITING} THEN 0 ELSE 5 END,
          CASE WHEN g <= ${HELD} OR g > ${HELD + WAITING} THEN now() ELSE now() + interval '1 hour' END
        FROM generate_series(1, ${HELD + WAITING + 3}) g`);
    });
    await db.execute(sql`ANALYZE webhook_deliveries`);
    await db.execute(sql`ANALYZE webhook_events`);
    console.log(`backlog of ${HELD + WAITING + 3} deliveries written in ${Date.now() - started} ms`);

    const limits = {
      leaseSeconds: 60,
      perEndpoint: rules.IN_FLIGHT_PER_ENDPOINT,
      perAccount: rules.IN_FLIGHT_PER_ACCOUNT,
      limit: rules.IN_FLIGHT_TOTAL,
      busyEndpoints: {},
      busyAccounts: {},
    };
    const plan = (await rows<{ 'QUERY PLAN': string }>(db, sql`EXPLAIN ${claimDueDeliveriesSql('plan-test', limits)}`)).map((r) => r['QUERY PLAN']);
    console.log(plan.join('\n'));
    assert.ok(!plan.some((l) => /Seq Scan on webhook_deliveries/.test(l)), 'no sequential scan of the deliveries');
    assert.ok(
      plan.some((l) => /Index (Only )?Scan using webhook_deliveries_(claim|order)_idx/.test(l)),
      'the claim index serves it',
    );

    // The server's own time for one claim, rolled back (the rows stay due for the timed claims below).
    let analyzed: string[] = [];
    await db
      .transaction(async (tx) => {
        analyzed = (
          await rows<{ 'QUERY PLAN': string }>(tx as unknown as typeof db, sql`EXPLAIN (ANALYZE, BUFFERS) ${claimDueDeliveriesSql('plan-test', limits)}`)
        ).map((r) => r['QUERY PLAN']);
        tx.rollback();
      })
      .catch((e: unknown) => {
        if (analyzed.length === 0) throw e;
      });
    console.log(
      analyzed
        .filter((l) => /Execution Time|Planning Time|Buffers: shared/.test(l))
        .slice(0, 1)
        .concat(analyzed.slice(-2))
        .join('\n'),
    );
    const times: number[] = [];
    let claimed = 0;
    const leased: Array<{ owner: string; id: string }> = [];
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now();
      const mine = (await claimDueDeliveries(db, `plan-test-${i}`, limits)).filter((d) => d.account_id === accountId);
      times.push(performance.now() - t0);
      claimed += mine.length;
      leased.push(...mine.map((d) => ({ owner: `plan-test-${i}`, id: d.id })));
    }
    times.sort((a, b) => a - b);
    console.log(`claim times (ms, sorted): ${times.map((t) => t.toFixed(1)).join(', ')}; median ${times[3]!.toFixed(1)}`);
    assert.equal(claimed, 3, 'exactly the three due deliveries of the active endpoint, once');
    assert.ok(times[3]! < 50, `median claim under 50 ms on a shared machine (${times[3]!.toFixed(1)} ms)`);

    // A claim whose reply was lost: its owner gives back what it is not sending, reading no whole table, and another instance sends it now.
    const lost = leased[0]!.owner;
    assert.ok(
      leased.every((l) => l.owner === lost),
      'one claim leased all three',
    );
    const releasePlan = (await rows<{ 'QUERY PLAN': string }>(db, sql`EXPLAIN ${releaseLeasesExceptSql(lost, [leased[0]!.id])}`)).map((r) => r['QUERY PLAN']);
    assert.ok(!releasePlan.some((l) => /Seq Scan on webhook_deliveries/.test(l)), `no sequential scan:\n${releasePlan.join('\n')}`);
    assert.equal(await releaseLeasesExcept(db, lost, [leased[0]!.id]), 2, 'the two it is not sending are given back');
    assert.equal(await releaseLeasesExcept(db, lost, []), 1, 'with nothing in flight, all of them');
    const again = (await claimDueDeliveries(db, 'plan-test-other', limits)).filter((d) => d.account_id === accountId);
    assert.deepEqual(again.map((d) => d.id).sort(), leased.map((l) => l.id).sort(), 'another owner claims them at once');

    // The hourly expiry of held deliveries must not read the paused endpoint's backlog whole either.
    const expiries: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      assert.equal(await expireHeldDeliveries(db, rules.REPLAY_HOURS, rules.HELD_TOO_LONG), 0);
      expiries.push(performance.now() - t0);
    }
    console.log(`held-expiry pass times (ms): ${expiries.map((t) => t.toFixed(1)).join(', ')}`);
    assert.ok(Math.min(...expiries) < 50, `the expiry pass takes milliseconds (${expiries.map((t) => t.toFixed(1)).join(', ')} ms)`);
  });
});
