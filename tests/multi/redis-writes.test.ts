/**
 * The command connection's write batching against a real, private Redis (lib/redis/client.ts,
 * writeOncePerTurn): the commands of one turn of the event loop leave in one write, each still gets
 * its own reply in order, traffic queued with sendLater leaves with the next command, and a script
 * defined in the middle of a turn runs in it. (ioredis's own auto-pipelining, used before, hung the
 * whole connection in that last case: ioredis#1931, seen in bench:chat at 450 q/s.)
 * Writes are counted by redis-server itself: `total_reads_processed` of `INFO stats` (one per
 * socket read; a write of this process arrives in one read).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { processOnPrivateRedis } from '../helpers/instances';

const ready = spawnSync('redis-server', ['--version']).status === 0;
let client: typeof import('../../lib/redis/client');
let close: () => Promise<void>;
let url = '';

before(async () => {
  if (!ready) return;
  const r = await processOnPrivateRedis('redis-writes');
  ({ client, close } = r);
  url = r.redis.url;
}, { timeout: 30_000 });

after(async () => {
  if (ready) await close();
}, { timeout: 30_000 });

const within = <T>(p: Promise<T>, ms: number, what: string) => Promise.race([
  p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)),
]);

/** Socket reads redis-server has made, from a connection of its own (its own INFO costs one read, subtracted). */
async function readsBy(probe: Redis): Promise<number> {
  const info = await probe.info('stats');
  return Number(/total_reads_processed:(\d+)/.exec(info)![1]);
}

describe('the command connection writes once per turn', { skip: !ready && 'redis-server is not installed' }, () => {
  it('commands of one turn leave in one write, each with its own reply, in order', async () => {
    const c = client.getRedis()!;
    const probe = new Redis(url);
    try {
      const before = await readsBy(probe);
      const replies = await within(Promise.all(Array.from({ length: 50 }, (_, i) => c.incrby(client.redisKey('turn'), i + 1))), 3000, 'one turn of 50 commands');
      const reads = (await readsBy(probe)) - before - 1;
      assert.deepEqual(replies, Array.from({ length: 50 }, (_, i) => ((i + 1) * (i + 2)) / 2), 'replies in order, one per command');
      assert.ok(reads <= 2, `50 commands in one turn took ${reads} socket reads of redis-server (expected one write)`);
    } finally {
      probe.disconnect();
    }
  });

  it('queued fire-and-forget traffic leaves with the next command, before SEND_LATER_MS', async () => {
    const c = client.getRedis()!;
    const probe = new Redis(url);
    try {
      const key = client.redisKey('later');
      const before = await readsBy(probe);
      for (let i = 0; i < 5; i++) client.sendLater((r) => r.rpush(key, String(i)));
      // The next command of this process (in the product: the next ask's limit check) carries them.
      assert.equal(await within(c.incr(client.redisKey('carrier')), 3000, 'the carrier'), 1);
      const reads = (await readsBy(probe)) - before - 1;
      assert.deepEqual(await probe.lrange(key, 0, -1), ['0', '1', '2', '3', '4'], 'the queued commands ran, in order');
      assert.ok(reads <= 2, `the carrier and 5 queued commands took ${reads} socket reads (expected one write)`);
      // With no command to ride on, the queue still leaves within SEND_LATER_MS.
      client.sendLater((r) => r.rpush(key, 'alone'));
      await new Promise((r) => setTimeout(r, client.SEND_LATER_MS + 50));
      assert.deepEqual(await probe.lrange(key, -1, -1), ['alone']);
    } finally {
      probe.disconnect();
    }
  });

  it('a script defined in the middle of a turn runs in it, and the connection keeps answering', async () => {
    const c = client.getRedis()! as Redis & { svcPipelineLate(key: string, by: number): Promise<number> };
    const uncaught: Error[] = [];
    const onUncaught = (e: Error) => { uncaught.push(e); };
    process.on('uncaughtException', onUncaught);
    try {
      // One turn: a plain command corks the socket, then a script is defined and called.
      const first = c.set(client.redisKey('a'), '1');
      c.defineCommand('svcPipelineLate', { numberOfKeys: 1, lua: "return redis.call('incrby', KEYS[1], ARGV[1])" });
      const late = c.svcPipelineLate(client.redisKey('n'), 5);
      const also = c.get(client.redisKey('a'));
      assert.deepEqual(await within(Promise.all([first, late, also]), 3000, 'the turn'), ['OK', 5, '1']);
      assert.equal(await within(c.incrby(client.redisKey('n'), 1), 3000, 'a later command'), 6);
      assert.equal(await within(c.svcPipelineLate(client.redisKey('n'), 2), 3000, 'the script later'), 8);
      assert.deepEqual(uncaught.map((e) => e.message), []);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
