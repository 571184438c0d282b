/**
 * The primary dies and its synchronous standby is promoted (CONTRACTS §19): two instances with
 * DATABASE_URL naming both hosts, widget asks on each, `kill -9` of the primary's processes, then
 * `pg_ctl promote`. Every acknowledged question is stored once and answered once (one AI message,
 * one ending), the others were refused `unavailable` (such a one may still be stored once: its commit
 * reached the standby, its acknowledgement died with the primary), no process exits, /readyz is 200 again; so is
 * every member's reply sent through it (a member on one instance, the visitor on the other, and a
 * customer by mail). The background loops lose and repeat nothing: every webhook event recorded
 * reaches the test's receiver under its own id and each cause makes one event, each reply's mail
 * reaches the SMTP server once, a conversation snoozed until the kill wakes once, and the insights
 * rollup and the inbox counts equal a recount. Prints the time from kill to the first question
 * acknowledged on the new primary (BENCHMARKS.md). Before it, the read replica: an API key's lists
 * read from it, from the primary while it lags (replay paused) or is stopped, and from it again once
 * it is back; a member's dashboard reads its own writes meanwhile.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { V2 } from '../helpers/api-fixtures';
import { PrivateRedis, SlowModel, startInstances, type Cluster } from '../helpers/instances';
import { ReplicatedCluster } from '../helpers/replication';
import { startSmtpServer, type SmtpServer } from '../helpers/smtp';
import { bodyOf, WebhookReceiver } from '../helpers/webhook-receiver';
import { sleep, type Visitor } from '../helpers/widget';

const enabled = process.env.TEST_DB === 'postgres';
const ORIGIN = 'https://example.com';
const DOMAIN = 'mail.failover.test';
type AskAck = { conversation_id: string; response_id: string };

describe('database failover', { skip: !enabled && 'needs TEST_DB=postgres' }, () => {
  let pg: ReplicatedCluster;
  let redis: PrivateRedis;
  let model: SlowModel;
  let cluster: Cluster;
  let smtp: SmtpServer;
  let receiver: WebhookReceiver;

  before(
    async () => {
      // Read once by lib/env in this process: the test's own endpoint and inbound address.
      process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS = '1';
      process.env.INBOUND_MAIL_DOMAIN = DOMAIN;
      smtp = await startSmtpServer();
      receiver = await new WebhookReceiver().start();
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
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
        WEBHOOK_RETRY_BASE_MS: '200',
        SMTP_URL: smtp.url,
        MAIL_LEASE_SECONDS: '30',
        // Every instance processes stored inbound mail (its listener on a port of its own).
        INBOUND_SMTP_PORT: '0',
        INBOUND_MAIL_DOMAIN: DOMAIN,
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
      await smtp?.stop();
      await receiver?.stop();
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase().catch(() => {});
      pg?.destroy();
    },
    { timeout: 60_000 },
  );

  it("reads an API key's lists from the replica, and from the primary while it lags or is stopped", { timeout: 90_000 }, async () => {
    const { api, conversationLine, createTestAccount, importLines, newChannelIds } = await import('../helpers/builders');
    const { addKnowledge } = await import('../helpers/widget');
    const { createAdminUser } = await import('../../lib/accounts/service');
    const { CLI } = await import('../../lib/audit/contract');
    const { signIn } = await import('../helpers/signin');
    const inst = cluster.instances[0]!;
    const acct = await createTestAccount();
    const memberEmail = `reader-${randomUUID()}@example.test`;
    await createAdminUser(CLI, { accountId: acct.accountId, email: memberEmail, password: 'member password', role: 'agent', name: 'Reader' });
    const member = (await signIn(inst.url, memberEmail, 'member password')).cookie!;
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
    // A member's dashboard reads its own writes (on the primary) while the replica has not replayed them.
    const fresh = conversationLine({ channel_id: (await newChannelIds(1))[0]! });
    await importLines(acct.accountId, [fresh]);
    const mine = await fetch(`${inst.url}${V2}/conversation?resultsPerPage=100`, { headers: { cookie: member } });
    assert.equal(mine.status, 200);
    assert.ok(
      ((await mine.json()) as { results: Array<{ conversation_id: string }> }).results.some((c) => c.conversation_id === fresh.conversation_id),
      'the dashboard lists the conversation written a moment ago',
    );
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

  it('keeps every acknowledged question, and the background loops lose and repeat nothing, across kill -9 of the primary and a promotion', {
    timeout: 150_000,
  }, async () => {
    const { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } = await import('../helpers/builders');
    const { addKnowledge, backendToken, connectVisitor, createTestWidgetClient } = await import('../helpers/widget');
    const { CLI } = await import('../../lib/audit/contract');
    const { createWebhookEndpoint } = await import('../../lib/webhooks/service');
    const { saveEmailSettings } = await import('../../lib/email/settings');
    const { inboundAddress } = await import('../../lib/email/address');
    const { insertInboundMail } = await import('../../db/queries/inbound-mail');
    const { getInsightsFigures, getLiveInsightsFigures } = await import('../../db/queries/insights');
    const { getDb, rows } = await import('../../db/client');
    const { sql } = await import('drizzle-orm');
    const acct = await createTestAccount();
    // Every event of the account goes to the test's receiver, from the first conversation on.
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: receiver.url });
    await addKnowledge(acct.accountId, 'warranty.md', '# Warranty\n\nThe flux capacitor warranty lasts two years.\n');
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    // A customer's mail waits for a person (no AI mail); the instances' inbound processing makes it a conversation.
    await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: false, acknowledge: false });
    const { address } = await inboundAddress(acct.accountId);
    const customer = `carla-${randomUUID().slice(0, 8)}@example.org`;
    const customerMessageId = `<${randomUUID()}@customer.example>`;
    const raw = [
      `From: Carla Customer <${customer}>`,
      `To: ${address}`,
      'Subject: Where is my order?',
      `Message-ID: ${customerMessageId}`,
      `Date: ${new Date().toUTCString()}`,
      '',
      'My order 4711 has not arrived.',
      '',
    ].join('\r\n');
    await insertInboundMail(await getDb(), acct.accountId, { envelopeFrom: customer, recipient: address.split('@')[0]!, raw: Buffer.from(raw) });
    // Conversations of past days (imported: rolled up by day), resolved by the member through the failover.
    const dayAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    const [pastChannel] = await newChannelIds(1);
    const past = [1, 1, 2, 3, 3, 4].map((day, i) =>
      conversationLine({ channel_id: pastChannel!, created_at: `${dayAgo(day)} 10:0${i}:00`, updated_at: `${dayAgo(day)} 10:30:00`, status: 'Open' }),
    );
    await importLines(acct.accountId, [...past, ...past.map((c) => responseLine(c, { created_at: c.created_at }))]);
    // A member on the first instance answers a visitor of the second, replying all through the failover.
    const { createAdminUser } = await import('../../lib/accounts/service');
    const { signIn } = await import('../helpers/signin');
    const { connectMember } = await import('../helpers/inbox');
    const memberEmail = `ada-${randomUUID()}@example.test`;
    await createAdminUser(CLI, { accountId: acct.accountId, email: memberEmail, password: 'member password', role: 'agent', name: 'Ada' });
    const member = await connectMember(cluster.urls[0]!, (await signIn(cluster.urls[0]!, memberEmail, 'member password')).cookie!);
    const humanVisitor = async () =>
      connectVisitor(cluster.urls[1]!, (await backendToken(cluster.urls[1]!, client, `v_${randomUUID().replace(/-/g, '')}`)).access_token, ORIGIN);
    const human = await humanVisitor();
    const handedOff = (await human.ok<{ conversation_id: string }>('ask', { client_message_id: 'human', text: 'Can I speak to a human please?' }))
      .conversation_id;
    await member.ok('conversation:take_over', { conversation_id: handedOff });
    const visitors: Visitor[] = [];
    for (const inst of [0, 1, 2, 3].flatMap(() => cluster.instances)) {
      const issued = await backendToken(inst.url, client, `v_${randomUUID().replace(/-/g, '')}`);
      visitors.push(await connectVisitor(inst.url, issued.access_token, ORIGIN));
    }
    // A conversation snoozed until about the kill: the sweepers wake it once, whenever they can.
    const sleeper = await humanVisitor();
    const snoozed = (await sleeper.ok<{ conversation_id: string }>('ask', { client_message_id: 'sleeper', text: 'Can I speak to a human please?' }))
      .conversation_id;
    await member.ok('conversation:take_over', { conversation_id: snoozed });
    await member.ok('conversation:snooze', { conversation_id: snoozed, until: new Date(Date.now() + 3000).toISOString() });
    const db = await getDb();
    let emailConversation: string | null = null;
    for (let t = 0; t < 200 && !emailConversation; t++) {
      const [m] = await rows<{ conversation_id: string | null }>(db, sql`SELECT conversation_id FROM inbound_mails WHERE account_id = ${acct.accountId}`);
      if (m?.conversation_id) emailConversation = m.conversation_id;
      else await sleep(100);
    }
    assert.ok(emailConversation, "the customer's mail started a conversation");
    try {
      const acked: Array<{ visitor: Visitor; id: string; cid: string; at: number }> = [];
      const refused: string[] = [];
      // Each visitor's conversation starts before the clock does: on a loaded machine a first ask could otherwise meet the kill.
      const conversations = await Promise.all(
        visitors.map(async (visitor, v) => {
          const first = await visitor.ok<AskAck>('ask', { client_message_id: `v${v}-0`, text: 'How long is the flux capacitor warranty?' });
          acked.push({ visitor, id: first.response_id, cid: `v${v}-0`, at: Date.now() });
          return first.conversation_id;
        }),
      );
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
      // A member's request, resent without an acknowledgement with the same input (as the page does); refused only `unavailable`.
      const memberRequest = async (name: string, input: Record<string, unknown>) => {
        const send = () => member.request(name, input, 8000).catch(() => ({ ok: false as const, error: { code: 'timeout', message: 'no acknowledgement' } }));
        let ack = await send();
        for (let retry = 0; !ack.ok && ack.error.code === 'timeout' && retry < 5; retry++) ack = await send();
        if (!ack.ok) assert.equal(ack.error.code, 'unavailable', `${name}: ${JSON.stringify(ack)}`);
        return ack.ok;
      };
      // The member replies every 200 ms in turn to the widget visitor and by mail to the customer, and resolves a past day's conversation every 1.5 s.
      type Replies = { acked: Array<{ text: string; at: number }>; refused: string[] };
      const replies: Record<'widget' | 'email', Replies> = { widget: { acked: [], refused: [] }, email: { acked: [], refused: [] } };
      const resolved: string[] = [];
      const replying = (async () => {
        for (let i = 0; Date.now() - started < 14_000; i++) {
          const to = i % 2 === 0 ? 'widget' : 'email';
          const text = `${to} reply ${i}`;
          const ok = await memberRequest('conversation:reply', {
            conversation_id: to === 'widget' ? handedOff : emailConversation,
            client_message_id: `r-${i}`,
            text,
          });
          if (ok) replies[to].acked.push({ text, at: Date.now() });
          else replies[to].refused.push(text);
          await sleep(200);
        }
      })();
      const resolving = (async () => {
        for (const c of past) {
          if (await memberRequest('conversation:resolve', { conversation_id: c.conversation_id })) resolved.push(c.conversation_id);
          await sleep(1500);
        }
      })();
      // Each visitor asks on a schedule of one question every 160 ms (eight visitors: 50 questions/s offered); a late ask is not made up for.
      await Promise.all(
        visitors.map(async (visitor, v) => {
          const conversation_id = conversations[v]!;
          let next = started;
          for (let i = 1; Date.now() - started < 14_000; i++) {
            // As the widget does: an ask without an answer in time is sent again with its client_message_id.
            const send = () =>
              visitor
                .request<AskAck>('ask', { conversation_id, client_message_id: `v${v}-${i}`, text: `Warranty question ${i}?` }, 8000)
                .catch(() => ({ ok: false as const, error: { code: 'timeout', message: 'no acknowledgement' } }));
            let ack = await send();
            for (let retry = 0; !ack.ok && ack.error.code === 'timeout' && retry < 5; retry++) ack = await send();
            if (ack.ok) acked.push({ visitor, id: ack.response_id, cid: `v${v}-${i}`, at: Date.now() });
            else {
              assert.equal(ack.error.code, 'unavailable', JSON.stringify(ack));
              refused.push(`v${v}-${i}`);
              await sleep(300);
            }
            next = Math.max(next + 160, Date.now());
            await sleep(next - Date.now());
          }
        }),
      );
      await chaos;
      await replying;
      await resolving;
      const loadSeconds = (Date.now() - started) / 1000;
      const firstAfter = acked.filter((a) => a.at > promotedAt).sort((a, b) => a.at - b.at)[0];
      assert.ok(firstAfter, 'questions were acknowledged after the promotion');
      console.log(
        `failover: ${acked.length} acknowledged (${(acked.length / loadSeconds).toFixed(0)}/s; ${(acked.filter((a) => a.at >= started && a.at < killedAt).length / ((killedAt - started) / 1000)).toFixed(0)}/s before the kill), ${refused.length} refused unavailable; first ack on the new primary ${((firstAfter!.at - killedAt) / 1000).toFixed(2)} s after kill -9, ${((firstAfter!.at - promotedAt) / 1000).toFixed(2)} s after pg_ctl promote began`,
      );
      assert.ok(firstAfter!.at - promotedAt < 30_000, 'writes reach the new primary within 30 s of the promotion');

      const get = api(cluster.urls[0]!, acct.key);
      for (const a of acked) {
        await a.visitor.finished(a.id, 60_000).catch(async (e: Error) => {
          // Whether the answer was stored (and only not delivered), and what the instances said of it.
          const [answer] = await rows(db, sql`SELECT * FROM chat_answers WHERE response_id = ${a.id}`);
          const said = cluster.instances.map(
            (i) =>
              `${i.name}: ${`${i.stdout()}\n${i.output}`
                .split('\n')
                .filter((l) => l.includes(a.id))
                .join('\n')}`,
          );
          throw new Error(`${e.message}\nchat_answers: ${JSON.stringify(answer)}\nstored: ${(await get(`${V2}/response/${a.id}`)).status}\n${said.join('\n')}`);
        });
      }
      // A question refused `unavailable` may still have been stored (its commit outlived the connection that carried it); one sent is stored once at most.
      const storedIds: string[] = [];
      const storedResponses = new Set<string>();
      for (const c of conversations) {
        const inC = await rows<{ id: string; client_message_id: string }>(
          db,
          sql`SELECT id::text AS id, client_message_id FROM responses WHERE account_id = ${acct.accountId} AND conversation_id = ${c}`,
        );
        storedIds.push(...inC.map((r) => r.client_message_id));
        for (const r of inC) storedResponses.add(r.id);
      }
      assert.equal(new Set(storedIds).size, storedIds.length, 'each question stored once');
      const ackedCids = new Set(acked.map((a) => a.cid));
      for (const cid of ackedCids) assert.ok(storedIds.includes(cid), `acknowledged question ${cid} is stored`);
      for (const cid of storedIds) assert.ok(ackedCids.has(cid) || refused.includes(cid), `stored question ${cid} was sent`);
      let stored = 0;
      for (const c of conversations) {
        const list = await get(`${V2}/response?conversation_id=${c}&resultsPerPage=100`);
        assert.equal(list.status, 200, JSON.stringify(list.body));
        stored += list.body.count;
      }
      assert.equal(stored, storedIds.length, 'the API lists every stored question');
      for (const a of acked) {
        const r = await get(`${V2}/response/${a.id}`);
        assert.equal(r.status, 200, `acknowledged question ${a.id} is stored: ${JSON.stringify(r.body)}`);
      }
      // Answers: one AI message per stored question in the transcript, one ending per acknowledged question on the visitor's socket (a takeover stores nothing twice).
      type ApiMessage = { author: string; content: string; response_id: string | null };
      const messagesOf = async (c: string) => {
        const thread = await get(`${V2}/conversation/${c}`);
        assert.equal(thread.status, 200, JSON.stringify(thread.body));
        return thread.body.messages as ApiMessage[];
      };
      for (const c of conversations) {
        const answers = (await messagesOf(c)).filter((m) => m.author === 'ai').map((m) => m.response_id);
        assert.equal(new Set(answers).size, answers.length, `one AI message per question in ${c}`);
        for (const id of answers) assert.ok(id && storedResponses.has(id), `the AI answered ${id}, a stored question`);
      }
      const [{ takenOver }] = (await rows<{ takenOver: number }>(
        db,
        sql`SELECT count(*)::int AS "takenOver" FROM chat_answers WHERE account_id = ${acct.accountId} AND attempts > 1`,
      )) as [{ takenOver: number }];
      console.log(`failover: ${takenOver} answers taken over after their lease lapsed`);
      for (const a of acked) {
        const endings = new Set(
          a.visitor
            .eventsOf(a.id)
            .filter((e) => e.type === 'answer.done' || e.type === 'answer.error')
            .map((e) => e.seq),
        );
        assert.equal(endings.size, 1, `question ${a.id} ended once for its visitor`);
      }
      console.log(
        `failover: the member's replies: ${replies.widget.acked.length} + ${replies.email.acked.length} by mail acknowledged, ${replies.widget.refused.length} + ${replies.email.refused.length} refused unavailable; ${resolved.length} of ${past.length} past conversations resolved`,
      );
      assert.ok(
        [...replies.widget.acked, ...replies.email.acked].some((r) => r.at > promotedAt),
        'replies were acknowledged after the promotion',
      );
      for (const [to, c] of [
        ['widget', handedOff],
        ['email', emailConversation],
      ] as const) {
        const storedReplies = (await messagesOf(c)).filter((m) => m.author === 'agent').map((m) => m.content);
        for (const r of replies[to].acked) assert.equal(storedReplies.filter((t) => t === r.text).length, 1, `acknowledged "${r.text}" stored exactly once`);
        for (const t of storedReplies) assert.ok(replies[to].acked.some((r) => r.text === t) || replies[to].refused.includes(t), `"${t}" was sent`);
      }

      // Mail: each stored reply of the email conversation has one mail, sent, and the SMTP server received it once.
      type MailRow = { status: string; message_id: string; attempts: number };
      let mails: MailRow[] = [];
      for (const deadline = Date.now() + 45_000; Date.now() < deadline; await sleep(250)) {
        mails = await rows<MailRow>(
          db,
          sql`SELECT status, message_id, attempts FROM mails WHERE account_id = ${acct.accountId} AND conversation_id = ${emailConversation}`,
        );
        if (mails.every((m) => m.status !== 'pending')) break;
      }
      const storedEmailReplies = (await messagesOf(emailConversation)).filter((m) => m.author === 'agent').length;
      assert.equal(mails.length, storedEmailReplies, 'one mail per stored reply');
      for (const m of mails) {
        assert.equal(m.status, 'sent', JSON.stringify(m));
        assert.equal(smtp.received.filter((r) => r.messageId === m.message_id).length, 1, `mail ${m.message_id} received once (${m.attempts} attempts)`);
      }

      // Webhooks: every event recorded is delivered, under its own id; a cause makes one event.
      type EventRow = { id: string; type: string };
      let pending = 0;
      for (const deadline = Date.now() + 45_000; Date.now() < deadline; await sleep(250)) {
        [{ n: pending }] = (await rows<{ n: number }>(
          db,
          sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = ${acct.accountId} AND status <> 'delivered'`,
        )) as [{ n: number }];
        if (pending === 0) break;
      }
      assert.equal(pending, 0, 'every delivery delivered');
      const events = await rows<EventRow>(db, sql`SELECT id::text AS id, type FROM webhook_events WHERE account_id = ${acct.accountId}`);
      const delivered = receiver.delivered.map((r) => ({ id: String(r.headers['webhook-id']), body: bodyOf(r), raw: r.body }));
      const ids = new Set(delivered.map((d) => d.id));
      assert.deepEqual([...ids].sort(), events.map((e) => e.id).sort(), 'exactly the recorded events arrived');
      for (const d of delivered) assert.equal(d.raw, delivered.find((o) => o.id === d.id)!.raw, `a resent ${d.id} is the same event`);
      const causes = new Map<string, number>();
      const once = (key: string) => causes.set(key, (causes.get(key) ?? 0) + 1);
      for (const id of ids) {
        const { type, data } = delivered.find((d) => d.id === id)!.body;
        if (type === 'response.created') once(`${type} ${data.response_id}`);
        else if (type === 'conversation.created') once(`${type} ${data.conversation_id}`);
        else if (type === 'message.created') once(`${type} ${data.message.id}`);
        else if (type === 'conversation.status_changed' && data.previous_status === 'Snoozed') once(`woken ${data.conversation_id}`);
      }
      for (const [cause, n] of causes) assert.equal(n, 1, `one event for ${cause}`);
      for (const a of acked) assert.equal(causes.get(`response.created ${a.id}`), 1, `response.created for ${a.id}`);
      console.log(
        `failover: ${ids.size} webhook events delivered (${delivered.length - ids.size} sent again with the same webhook-id), ${mails.length} mails sent once each`,
      );

      // Sweepers: the snoozed conversation woke once; the insights rollup equals the figures recomputed from the rows.
      let status = '';
      for (const deadline = Date.now() + 30_000; status !== 'Open' && Date.now() < deadline; await sleep(250)) {
        [{ status }] = (await rows<{ status: string }>(db, sql`SELECT status FROM conversations WHERE id = ${snoozed}`)) as [{ status: string }];
      }
      assert.equal(status, 'Open', 'the snoozed conversation woke');
      assert.equal(causes.get(`woken ${snoozed}`), 1, 'its waking sent one event');
      assert.ok(resolved.length > 0, 'past conversations were resolved during the load');
      for (const window of [
        { from: dayAgo(7), to: dayAgo(0), channelId: null },
        { from: dayAgo(7), to: dayAgo(1), channelId: pastChannel! },
      ]) {
        assert.deepEqual(
          await getInsightsFigures(db, acct.accountId, window),
          await getLiveInsightsFigures(db, acct.accountId, window),
          `the rollup equals a recount: ${JSON.stringify(window)}`,
        );
      }
      // The inbox counts (kept by triggers) equal a recount of the account's conversations.
      const counts = (from: 'kept' | 'recount') =>
        rows<{ k: string; n: number }>(
          db,
          from === 'kept'
            ? sql`SELECT status || '/' || handled_by || '/' || assignee_id AS k, n::int AS n FROM conversation_counts WHERE account_id = ${acct.accountId} AND n <> 0 ORDER BY 1`
            : sql`SELECT status || '/' || handled_by || '/' || COALESCE(assignee_id, 0) AS k, count(*)::int AS n FROM conversations WHERE account_id = ${acct.accountId} GROUP BY 1 ORDER BY 1`,
        );
      assert.deepEqual(await counts('kept'), await counts('recount'), 'inbox counts');
      for (const inst of cluster.instances) {
        assert.ok(inst.running, `${inst.name} never exited`);
        const ready = await fetch(`${inst.url}/readyz`);
        assert.equal(ready.status, 200, `${inst.name} is ready again`);
      }
    } finally {
      for (const v of visitors) v.close();
      human.close();
      sleeper.close();
      member.close();
    }
  });
});
