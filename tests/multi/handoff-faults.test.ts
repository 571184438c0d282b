/**
 * Human handoff through faults (issue 26 item 7, docs/contracts.md §9 "faults" and §14 "instances"),
 * on a PRIVATE PostgreSQL and a PRIVATE Redis this file starts and stops, two instances: members on
 * A, the visitor on B. A member's reply acknowledged `ok: true` is stored, whatever happens after:
 * `kill -9` of the member's instance, a PostgreSQL restart, a Redis restart; cross-instance delivery
 * comes back by itself when Redis returns; behind nginx, a drained member's page reconnects to the
 * other instance by itself and carries on (the drain notice itself: tests/multi/inbox-instances.test.ts).
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { io } from 'socket.io-client';
import { V2 } from '../helpers/api-fixtures';
import { InboxMember } from '../helpers/inbox';
import { nginxAvailable, startNginx } from '../helpers/nginx';
import { PrivatePostgres, PrivateRedis, startInstances, type Cluster, type Instance } from '../helpers/instances';
import { sleep, type Visitor } from '../helpers/widget';

const enabled = process.env.TEST_DB === 'postgres' && spawnSync('redis-server', ['--version']).status === 0;
const ORIGIN = 'https://example.com';
type Message = { author: string; author_name: string | null; content: string };

describe('handoff through faults', { skip: !enabled && 'needs TEST_DB=postgres and redis-server' }, () => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let cluster: Cluster;
  let A: Instance;
  let B: Instance;
  let h: typeof import('../helpers/inbox') & typeof import('../helpers/widget') & typeof import('../helpers/builders') & typeof import('../helpers/signin');
  const open: Array<{ close: () => void }> = [];

  before(
    async () => {
      pg = await PrivatePostgres.create();
      redis = await PrivateRedis.create();
      cluster = await startInstances(2, {
        DATABASE_URL: pg.url,
        REDIS_URL: redis.url,
        REDIS_PREFIX: 'he:faults:',
        TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
        SOCKET_EVENTS_PER_10S: '1000',
        ASKS_PER_MINUTE_PER_VISITOR: '1000',
      });
      [A, B] = cluster.instances as [Instance, Instance];
      // This process writes its fixtures to the same private database (before anything opens one).
      process.env.DATABASE_URL = pg.url;
      h = {
        ...(await import('../helpers/inbox')),
        ...(await import('../helpers/widget')),
        ...(await import('../helpers/builders')),
        ...(await import('../helpers/signin')),
      };
    },
    { timeout: 180_000 },
  );
  after(
    async () => {
      for (const s of open) s.close();
      await cluster?.close();
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase().catch(() => {});
      pg?.destroy();
      await redis?.stop();
    },
    { timeout: 60_000 },
  );

  /** An account, a member signed in on `memberOn`, and a visitor on `visitorOn` whose conversation the member has taken over. */
  async function handedOff(memberOn: Instance, visitorOn: Instance) {
    const acct = await h.createTestAccount();
    const { createAdminUser } = await import('../../lib/accounts/service');
    const email = `ada-${randomUUID()}@example.test`;
    await createAdminUser(CLI, { accountId: acct.accountId, email, password: 'member password', role: 'agent', name: 'Ada' });
    const cookie = (await h.signIn(memberOn.url, email, 'member password')).cookie!;
    const member = await h.connectMember(memberOn.url, cookie);
    open.push(member);
    const client = await h.createTestWidgetClient(acct.accountId, ['example.com']);
    const issued = await h.backendToken(visitorOn.url, client, `v_${randomUUID().replace(/-/g, '')}`);
    const visitor = await h.connectVisitor(visitorOn.url, issued.access_token, ORIGIN);
    open.push(visitor);
    const asked = await visitor.ok<{ conversation_id: string }>('ask', { client_message_id: 'human', text: 'Can I speak to a human please?' });
    const id = asked.conversation_id;
    await member.ok('conversation:take_over', { conversation_id: id });
    return { acct, member, visitor, id, cookie, client, issued };
  }

  /**
   * Replies every 100 ms for `ms`, each with its own client_message_id (as the page sends them);
   * returns the texts acknowledged ok, the refusals' codes and every reply sent.
   */
  async function replyStream(member: () => InboxMember, id: string, ms: number, tag: string) {
    const acked: string[] = [];
    const refused: string[] = [];
    const sent: Array<{ conversation_id: string; client_message_id: string; text: string }> = [];
    const end = Date.now() + ms;
    for (let i = 0; Date.now() < end; i++) {
      const reply = { conversation_id: id, client_message_id: `${tag}-${i}`, text: `${tag} reply ${i}` };
      sent.push(reply);
      const ack = await member()
        .request('conversation:reply', reply, 3000)
        .catch((e: Error) => ({ ok: false as const, error: { code: 'no-ack', message: e.message } }));
      if (ack.ok) acked.push(reply.text);
      else refused.push(ack.error.code);
      await sleep(100);
    }
    return { acked, refused, sent };
  }

  async function storedAgentTexts(inst: Instance, key: string, id: string): Promise<string[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await h
        .api(
          inst.url,
          key,
        )(`${V2}/conversation/${id}`)
        .catch(() => ({ status: 0, body: null }));
      if (r.status === 200) return (r.body.messages as Message[]).filter((m) => m.author === 'agent').map((m) => m.content);
      if (Date.now() > deadline) assert.fail(`the Customer API did not answer: ${r.status}`);
      await sleep(500);
    }
  }

  function assertAllStoredOnce(acked: string[], stored: string[]) {
    for (const t of acked) assert.equal(stored.filter((s) => s === t).length, 1, `acknowledged "${t}" stored exactly once`);
  }

  const agentTexts = (v: Visitor) => v.events.filter((e) => e.type === 'agent.message').map((e) => (e as { text?: string }).text);

  it('a member on A and a visitor on B see the same conversation', { timeout: 60_000 }, async () => {
    const { acct, member, visitor, id } = await handedOff(A, B);
    await visitor.until(() => visitor.events.some((e) => e.type === 'agent.joined' && (e as { name?: string }).name === 'Ada'), 'Ada joined, on B');
    await member.ok('typing', { conversation_id: id });
    await visitor.until(() => visitor.events.some((e) => e.type === 'agent.typing'), 'the typing, on B');
    await member.ok('conversation:reply', { conversation_id: id, text: 'Hello from A' });
    await visitor.until(() => agentTexts(visitor).includes('Hello from A'), 'the reply, on B');
    await member.ok('conversation:note', { conversation_id: id, text: 'internal: VIP' });
    await visitor.ok('ask', { conversation_id: id, client_message_id: 'v-1', text: 'Thanks, from B' });
    await member.until(
      () => member.of('inbox:message', id).some((p) => (p.payload.message as { text: string }).text === 'Thanks, from B'),
      "the visitor's message, on A",
    );
    const r = await h.api(B.url, acct.key)(`${V2}/conversation/${id}`);
    const seen = (r.body.messages as Message[]).map((m) => [m.author, m.content]);
    assert.deepEqual(seen.slice(-3), [
      ['agent', 'Hello from A'],
      ['note', 'internal: VIP'],
      ['visitor', 'Thanks, from B'],
    ]);
    await sleep(300);
    assert.ok(!visitor.events.some((e) => JSON.stringify(e).includes('internal: VIP')), 'the note never reaches the widget');
    const seqs = visitor.events.map((e) => e.seq);
    assert.equal(new Set(seqs).size, seqs.length, 'one seq per event');
  });

  it('kill -9 of the member’s instance: every reply, resent elsewhere with its id, is stored exactly once', { timeout: 90_000 }, async () => {
    const { acct, member, visitor, id, cookie } = await handedOff(A, B);
    let current = member;
    const stream = replyStream(() => current, id, 4000, 'kill');
    await sleep(1500);
    await A.stop('SIGKILL');
    const { acked, refused, sent } = await stream.finally(() => A.start());
    assert.ok(acked.length >= 3 && refused.length >= 1, `replies before and after the kill: ${acked.length} acked, ${refused.join(',')}`);
    // The member's page reconnects to the surviving instance and sends again what it holds, with the
    // same ids: the one whose ack the kill took (committed or not) and, harmlessly, the acknowledged.
    current = await h.connectMember(B.url, cookie);
    open.push(current);
    const firstIds = new Map<string, string>();
    for (const reply of sent) {
      const again = await current.ok<{ message: { id: string; text: string } }>('conversation:reply', reply);
      assert.equal(again.message.text, reply.text);
      firstIds.set(reply.client_message_id, again.message.id);
    }
    for (const reply of sent) {
      const third = await current.ok<{ message: { id: string } }>('conversation:reply', reply);
      assert.equal(third.message.id, firstIds.get(reply.client_message_id), 'a resend names the first message');
    }
    await current.ok('conversation:reply', { conversation_id: id, text: 'after the kill' });
    assertAllStoredOnce([...sent.map((r) => r.text), 'after the kill'], await storedAgentTexts(B, acct.key, id));
    await visitor.until(() => agentTexts(visitor).includes('after the kill'), 'the reply sent on B after the kill');
  });

  it('PostgreSQL restart: every acknowledged reply is stored once, the others refused unavailable', { timeout: 120_000 }, async () => {
    const { acct, member, visitor, id } = await handedOff(A, B);
    const stream = replyStream(() => member, id, 9000, 'pg');
    await sleep(2000);
    pg.stop();
    await sleep(3000);
    pg.start();
    const { acked, refused } = await stream;
    assert.ok(refused.length > 0, 'some replies met the outage');
    for (const code of refused) assert.ok(['unavailable', 'no-ack'].includes(code), `refused with ${code}`);
    assert.ok(acked.length > 5, `replies acknowledged around the outage (${acked.length})`);
    assertAllStoredOnce(acked, await storedAgentTexts(B, acct.key, id));
    assert.ok(A.running && B.running, 'no instance exited');
    await member.ok('conversation:reply', { conversation_id: id, text: 'after PostgreSQL' });
    await visitor.until(() => agentTexts(visitor).includes('after PostgreSQL'), 'a reply after the restart, live on B', 15_000);
  });

  it('Redis restart: every acknowledged reply is stored; delivery to the other instance comes back by itself', { timeout: 120_000 }, async () => {
    const { acct, member, visitor, id } = await handedOff(A, B);
    const stream = replyStream(() => member, id, 6000, 'redis');
    await sleep(1500);
    await redis.stop();
    await sleep(2500);
    await redis.start();
    const { acked } = await stream;
    assert.ok(acked.length > 3, `replies acknowledged around the outage (${acked.length})`);
    assertAllStoredOnce(acked, await storedAgentTexts(B, acct.key, id));
    assert.ok(A.running && B.running, 'no instance exited');
    // Live delivery A → B returns without a restart of either instance.
    const deadline = Date.now() + 20_000;
    for (let i = 0; ; i++) {
      const text = `after Redis ${i}`;
      await member.ok('conversation:reply', { conversation_id: id, text });
      const arrived = await visitor
        .until(() => agentTexts(visitor).includes(text), text, 1000)
        .then(
          () => true,
          () => false,
        );
      if (arrived) break;
      assert.ok(Date.now() < deadline, 'live delivery to B came back within 20 s of Redis returning');
    }
  });

  it('SIGTERM behind nginx: the member’s socket reconnects to the other instance by itself and carries on', {
    skip: !nginxAvailable() && 'needs nginx',
    timeout: 90_000,
  }, async () => {
    const lb = await startNginx([A, B].map((i) => `127.0.0.1:${i.port}`));
    try {
      // nginx hashes the client address: this process's requests and sockets all land on one instance.
      const served = (await fetch(`${lb.url}/healthz`)).headers.get('x-upstream');
      const holder = [A, B].find((i) => `127.0.0.1:${i.port}` === served)!;
      const other = holder === A ? B : A;
      const { visitor, id, cookie } = await handedOff(holder, other);
      // As the inbox page does: socket.io-client's own reconnection, through the load balancer.
      const member = new InboxMember(
        io(`${lb.url}/inbox`, { transports: ['websocket'], forceNew: true, reconnectionDelay: 200, reconnectionDelayMax: 1000, extraHeaders: { cookie } }),
      );
      open.push(member);
      let connects = 0;
      member.socket.on('connect', () => connects++);
      await member.until(() => connects === 1, 'the first connection');
      const stopped = holder.stop('SIGTERM');
      await member.until(() => member.of('server:draining').length > 0, 'the drain notice', 20_000);
      await member.until(() => connects === 2, 'the reconnection through nginx', 20_000);
      await member.ok('conversation:reply', { conversation_id: id, text: 'after the drain' });
      await visitor.until(() => agentTexts(visitor).includes('after the drain'), 'the reply after the drain');
      await visitor.ok('ask', { conversation_id: id, client_message_id: 'after-drain', text: 'Still here' });
      await member.until(
        () => member.of('inbox:message', id).some((p) => (p.payload.message as { text: string }).text === 'Still here'),
        "the visitor's message on the new socket",
      );
      assert.equal((await stopped).code, 0, 'the drained instance exits 0');
      await holder.start();
    } finally {
      await lb.stop();
    }
  });
});
