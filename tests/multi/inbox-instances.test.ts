/**
 * The members' inbox across two real server processes on one PostgreSQL and one Redis
 * (docs/contracts.md §14 "instances"): a member's socket on one instance sees a change made on the
 * other, and two members racing "Take over" on two instances: exactly one wins, the other is told who.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { closeDatabase } from '../../db/client';
import { closeRedis } from '../../lib/redis/client';
import { createAdminUser } from '../../lib/accounts/service';
import { removeMember } from '../../lib/team/service';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { waitingConversation } from '../helpers/handoff';
import { connectMember, type InboxMember } from '../helpers/inbox';
import { removeInstance, startInstances, type Cluster, type Instance } from '../helpers/instances';
import { signIn } from '../helpers/signin';

const onPostgres = process.env.TEST_DB === 'postgres' && Boolean(process.env.DATABASE_URL) && Boolean(process.env.REDIS_URL);

describe('the inbox across instances', { skip: !onPostgres && 'needs TEST_DB=postgres, DATABASE_URL and REDIS_URL' }, () => {
  let cluster: Cluster;
  let A: Instance;
  let B: Instance;
  const open: InboxMember[] = [];

  before(
    async () => {
      cluster = await startInstances(2, {
        DATABASE_URL: process.env.DATABASE_URL!,
        REDIS_URL: process.env.REDIS_URL!,
        // The run's prefix (scripts/test.mjs): this process's removeMember reaches the instances' invalidation channel.
        REDIS_PREFIX: process.env.REDIS_PREFIX ?? `inbox-${process.pid}:`,
      });
      [A, B] = cluster.instances as [Instance, Instance];
    },
    { timeout: 120_000 },
  );
  after(
    async () => {
      for (const s of open) s.close();
      await cluster?.close();
      await closeRedis().catch(() => {});
      await closeDatabase().catch(() => {});
    },
    { timeout: 60_000 },
  );

  async function memberOn(acct: TestAccount, inst: Instance, name: string) {
    const email = `${name.toLowerCase()}-${randomUUID()}@example.test`;
    const u = await createAdminUser(CLI, { accountId: acct.accountId, email, password: 'member password', role: 'agent', name });
    const cookie = (await signIn(inst.url, email, 'member password')).cookie!;
    const socket = await connectMember(inst.url, cookie);
    open.push(socket);
    return { userId: u.user_id, name, socket, cookie };
  }

  it('a change made on one instance reaches a member on the other, counts included', { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    const onA = await memberOn(acct, A, 'Ada');
    const onB = await memberOn(acct, B, 'Bo');
    // Made in this process (no sockets here): the members' changes below go through the instances.
    const conv = await waitingConversation(acct.accountId);
    await onA.socket.ok('conversation:take_over', { conversation_id: conv.id });
    await onB.socket.until(() => onB.socket.of('inbox:changed', conv.id).length > 0, "A's take-over on B");
    await onA.socket.ok('conversation:reply', { conversation_id: conv.id, text: 'Hi from instance A' });
    await onB.socket.until(
      () => onB.socket.of('inbox:message', conv.id).some((p) => (p.payload.message as { text: string }).text === 'Hi from instance A'),
      "A's reply on B",
    );
    const seen = await onB.socket.ok<{ counts: Record<string, number> }>('inbox:list', { view: 'all_open' });
    assert.equal(seen.counts.waiting, 0);
    assert.equal(seen.counts.mine, 0, "B's Mine");
    assert.equal(seen.counts.all_open, 1);
  });

  it('two members racing "Take over" on two instances: exactly one wins, the other is told who', { timeout: 60_000 }, async () => {
    for (let round = 0; round < 5; round++) {
      const acct = await createTestAccount();
      const onA = await memberOn(acct, A, 'Ada');
      const onB = await memberOn(acct, B, 'Bo');
      const conv = await waitingConversation(acct.accountId);
      const acks = await Promise.all([
        onA.socket.request('conversation:take_over', { conversation_id: conv.id }),
        onB.socket.request('conversation:take_over', { conversation_id: conv.id }),
      ]);
      const won = acks.filter((a) => a.ok);
      assert.equal(won.length, 1, `round ${round}: exactly one wins: ${JSON.stringify(acks)}`);
      const lost = acks.find((a) => !a.ok) as { error: { code: string; message: string } };
      const winner = acks[0]!.ok ? 'Ada' : 'Bo';
      assert.equal(lost.error.code, 'conflict');
      assert.match(lost.error.message, new RegExp(`${winner} has taken over`));
      const list = await onA.socket.ok<{ counts: Record<string, number> }>('inbox:list', { view: 'mine' });
      assert.equal(list.counts.mine, winner === 'Ada' ? 1 : 0);
      assert.equal(list.counts.waiting, 0);
    }
  });

  it('a member removed through another process is cut off on the instance that holds their socket', { timeout: 30_000 }, async () => {
    const acct = await createTestAccount();
    const onB = await memberOn(acct, B, 'Cy');
    await removeMember(CLI, { accountId: acct.accountId, userId: 0, role: 'owner', email: acct.email, name: '' }, { userId: onB.userId });
    await onB.socket.until(() => onB.socket.revoked !== undefined && onB.socket.disconnected !== undefined, 'the revocation on B', 5000);
    assert.equal(onB.socket.revoked!.code, 'session_ended');
  });

  it('SIGTERM drains members too: told, disconnected, and their session works on the other instance', { timeout: 90_000 }, async () => {
    const acct = await createTestAccount();
    const onA = await memberOn(acct, A, 'Di');
    const stopped = removeInstance(A, 'SIGTERM');
    await onA.socket.until(() => onA.socket.of('server:draining').length > 0 && onA.socket.disconnected !== undefined, 'the drain notice', 20_000);
    assert.equal(onA.socket.of('server:draining')[0]!.payload.code, 'draining');
    await stopped;
    const again = await connectMember(B.url, onA.cookie);
    open.push(again);
    await again.ok('inbox:list', { view: 'mine' });
  });
});
