/**
 * The primary dies and its synchronous standby is promoted (CONTRACTS §19): two instances with
 * DATABASE_URL naming both hosts, widget asks on each, `kill -9` of the primary's processes, then
 * `pg_ctl promote`. Every acknowledged question is stored once and answered, the others were
 * refused `unavailable`, no process exits, /readyz is 200 again; so is every member's reply sent
 * through it (a member on one instance, the visitor on the other). Prints the time from kill to the
 * first question acknowledged on the new primary (BENCHMARKS.md).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { V2 } from '../helpers/api-fixtures';
import { PrivateRedis, SlowModel, startInstances, type Cluster } from '../helpers/instances';
import { ReplicatedCluster } from '../helpers/replication';
import { sleep, type Visitor } from '../helpers/widget';

const enabled = process.env.TEST_DB === 'postgres';
const ORIGIN = 'https://example.com';
type AskAck = { conversation_id: string; response_id: string };

describe('database failover', { skip: !enabled && 'needs TEST_DB=postgres' }, () => {
  let pg: ReplicatedCluster;
  let redis: PrivateRedis;
  let model: SlowModel;
  let cluster: Cluster;

  before(
    async () => {
      pg = await ReplicatedCluster.create({ replica: true });
      redis = await PrivateRedis.create();
      model = await new SlowModel(5, 50).start();
      cluster = await startInstances(2, {
        DATABASE_URL: pg.url,
        DATABASE_READ_URL: pg.replica!.url,
        DATABASE_READ_MAX_LAG_SECONDS: '2',
        REDIS_URL: redis.url,
        REDIS_PREFIX: `failover-${process.pid}:`,
        LLM_BASE_URL: model.url,
        LLM_API_KEY: 'sk-test',
        CHAT_ANSWER_LEASE_SECONDS: '4',
        TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
        TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
        SOCKET_EVENTS_PER_10S: '1000',
        ASKS_PER_MINUTE_PER_VISITOR: '1000',
        ASKS_PER_MINUTE_PER_ADDRESS: '100000',
      });
      // This test process creates its data through the same two-host URL.
      process.env.DATABASE_URL = pg.url;
    },
    { timeout: 120_000 },
  );
  after(
    async () => {
      await cluster?.close();
      await model?.stop();
      await redis?.stop();
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase().catch(() => {});
      pg?.destroy();
    },
    { timeout: 60_000 },
  );

  it("reads an API key's lists from the replica, and from the primary while it lags or is stopped", { timeout: 90_000 }, async () => {
    const { api, createTestAccount } = await import('../helpers/builders');
    const { addKnowledge } = await import('../helpers/widget');
    const inst = cluster.instances[0]!;
    const acct = await createTestAccount();
    const get = api(inst.url, acct.key);
    const target = async () => {
      const text = await (await fetch(`${inst.url}/metrics`)).text();
      return /svc_db_read_target\{target="replica"\} 1/.test(text) ? 'replica' : /svc_db_read_target\{target="primary"\} 1/.test(text) ? 'primary' : 'none';
    };
    const until = async (want: string, what: string) => {
      const deadline = Date.now() + 15_000;
      for (;;) {
        assert.equal((await get(`${V2}/response?resultsPerPage=1`)).status, 200, `the list answers while ${what}`);
        if ((await target()) === want) return;
        assert.ok(Date.now() < deadline, `reads go to the ${want} ${what}`);
        await sleep(500);
      }
    };
    await until('replica', 'the replica keeps up');
    // Replay paused while the primary writes: the lag passes 2 s and reads move to the primary.
    pg.replica!.sql('select pg_wal_replay_pause()');
    const writing = setInterval(() => void addKnowledge(acct.accountId, `n${Date.now()}.md`, '# Note\n\nMore text.\n').catch(() => {}), 300);
    try {
      await until('primary', 'replay is paused');
    } finally {
      clearInterval(writing);
    }
    pg.replica!.sql('select pg_wal_replay_resume()');
    await until('replica', 'replay resumed');
    pg.replica!.stop();
    await until('primary', 'the replica is stopped');
    pg.replica!.start();
    await until('replica', 'the replica is back');
  });

  it('keeps every acknowledged question across kill -9 of the primary and a promotion', { timeout: 120_000 }, async () => {
    const { api, createTestAccount } = await import('../helpers/builders');
    const { addKnowledge, backendToken, connectVisitor, createTestWidgetClient } = await import('../helpers/widget');
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'warranty.md', '# Warranty\n\nThe flux capacitor warranty lasts two years.\n');
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    // A member on the first instance answers a visitor of the second, replying all through the failover.
    const { createAdminUser } = await import('../../lib/accounts/service');
    const { CLI } = await import('../../lib/audit/contract');
    const { signIn } = await import('../helpers/signin');
    const { connectMember } = await import('../helpers/inbox');
    const memberEmail = `ada-${randomUUID()}@example.test`;
    await createAdminUser(CLI, { accountId: acct.accountId, email: memberEmail, password: 'member password', role: 'agent', name: 'Ada' });
    const member = await connectMember(cluster.urls[0]!, (await signIn(cluster.urls[0]!, memberEmail, 'member password')).cookie!);
    const human = await connectVisitor(
      cluster.urls[1]!,
      (await backendToken(cluster.urls[1]!, client, `v_${randomUUID().replace(/-/g, '')}`)).access_token,
      ORIGIN,
    );
    const handedOff = (await human.ok<{ conversation_id: string }>('ask', { client_message_id: 'human', text: 'Can I speak to a human please?' }))
      .conversation_id;
    await member.ok('conversation:take_over', { conversation_id: handedOff });
    const visitors: Visitor[] = [];
    for (const inst of [0, 1, 2, 3].flatMap(() => cluster.instances)) {
      const issued = await backendToken(inst.url, client, `v_${randomUUID().replace(/-/g, '')}`);
      visitors.push(await connectVisitor(inst.url, issued.access_token, ORIGIN));
    }
    try {
      const acked: Array<{ visitor: Visitor; id: string; at: number }> = [];
      const refused: string[] = [];
      const conversations: string[] = [];
      let killedAt = 0;
      let promotedAt = 0;
      const started = Date.now();
      const chaos = (async () => {
        await sleep(3000);
        killedAt = Date.now();
        pg.primary.kill9();
        // An operator (or Patroni) notices and promotes the standby.
        await sleep(2000);
        promotedAt = Date.now();
        pg.standby.promote();
      })();
      // The member replies every 200 ms, resending a reply without an acknowledgement with its client_message_id (as the page does).
      const replies = { acked: [] as Array<{ text: string; at: number }>, refused: [] as string[] };
      const replying = (async () => {
        for (let i = 0; Date.now() - started < 14_000; i++) {
          const reply = { conversation_id: handedOff, client_message_id: `r-${i}`, text: `reply ${i}` };
          const send = () =>
            member.request('conversation:reply', reply, 8000).catch(() => ({ ok: false as const, error: { code: 'timeout', message: 'no acknowledgement' } }));
          let ack = await send();
          for (let retry = 0; !ack.ok && ack.error.code === 'timeout' && retry < 5; retry++) ack = await send();
          if (ack.ok) replies.acked.push({ text: reply.text, at: Date.now() });
          else {
            assert.equal(ack.error.code, 'unavailable', JSON.stringify(ack));
            replies.refused.push(reply.text);
          }
          await sleep(200);
        }
      })();
      // Each visitor asks about 6 times a second (eight visitors, about 50 questions/s in all).
      await Promise.all(
        visitors.map(async (visitor, v) => {
          const first = await visitor.ok<AskAck>('ask', { client_message_id: `v${v}-0`, text: 'How long is the flux capacitor warranty?' });
          const conversation_id = first.conversation_id;
          conversations.push(conversation_id);
          acked.push({ visitor, id: first.response_id, at: Date.now() });
          for (let i = 1; Date.now() - started < 14_000; i++) {
            // As the widget does: an ask without an answer in time is sent again with its client_message_id.
            const send = () =>
              visitor
                .request<AskAck>('ask', { conversation_id, client_message_id: `v${v}-${i}`, text: `Warranty question ${i}?` }, 8000)
                .catch(() => ({ ok: false as const, error: { code: 'timeout', message: 'no acknowledgement' } }));
            let ack = await send();
            for (let retry = 0; !ack.ok && ack.error.code === 'timeout' && retry < 5; retry++) ack = await send();
            if (ack.ok) acked.push({ visitor, id: ack.response_id, at: Date.now() });
            else {
              assert.equal(ack.error.code, 'unavailable', JSON.stringify(ack));
              refused.push(`v${v}-${i}`);
              await sleep(300);
            }
            await sleep(150);
          }
        }),
      );
      await chaos;
      await replying;
      const loadSeconds = (Date.now() - started) / 1000;
      const firstAfter = acked.filter((a) => a.at > promotedAt).sort((a, b) => a.at - b.at)[0];
      assert.ok(firstAfter, 'questions were acknowledged after the promotion');
      console.log(
        `failover: ${acked.length} acknowledged (${(acked.length / loadSeconds).toFixed(0)}/s), ${refused.length} refused unavailable; first ack on the new primary ${((firstAfter!.at - killedAt) / 1000).toFixed(2)} s after kill -9, ${((firstAfter!.at - promotedAt) / 1000).toFixed(2)} s after pg_ctl promote began`,
      );
      assert.ok(firstAfter!.at - promotedAt < 30_000, 'writes reach the new primary within 30 s of the promotion');

      for (const a of acked) await a.visitor.finished(a.id, 60_000);
      const get = api(cluster.urls[0]!, acct.key);
      let stored = 0;
      for (const c of conversations) {
        const list = await get(`${V2}/response?conversation_id=${c}&resultsPerPage=100`);
        assert.equal(list.status, 200, JSON.stringify(list.body));
        stored += list.body.count;
      }
      assert.equal(stored, acked.length, 'exactly the acknowledged questions, once each');
      for (const a of acked) {
        const r = await get(`${V2}/response/${a.id}`);
        assert.equal(r.status, 200, `acknowledged question ${a.id} is stored: ${JSON.stringify(r.body)}`);
      }
      console.log(`failover: the member's replies: ${replies.acked.length} acknowledged, ${replies.refused.length} refused unavailable`);
      assert.ok(
        replies.acked.some((r) => r.at > promotedAt),
        'replies were acknowledged after the promotion',
      );
      const thread = await get(`${V2}/conversation/${handedOff}`);
      assert.equal(thread.status, 200, JSON.stringify(thread.body));
      const storedReplies = (thread.body.messages as Array<{ author: string; content: string }>).filter((m) => m.author === 'agent').map((m) => m.content);
      for (const r of replies.acked) assert.equal(storedReplies.filter((t) => t === r.text).length, 1, `acknowledged "${r.text}" stored exactly once`);
      for (const t of storedReplies) assert.ok(replies.acked.some((r) => r.text === t) || replies.refused.includes(t), `"${t}" was sent`);
      for (const inst of cluster.instances) {
        assert.ok(inst.running, `${inst.name} never exited`);
        const ready = await fetch(`${inst.url}/readyz`);
        assert.equal(ready.status, 200, `${inst.name} is ready again`);
      }
    } finally {
      for (const v of visitors) v.close();
      human.close();
      member.close();
    }
  });
});
