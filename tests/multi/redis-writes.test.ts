/**
 * The command connection's write batching against a real, private Redis (lib/redis/client.ts,
 * writeOncePerTurn): the commands of one turn of the event loop leave in one write, each still gets
 * its own reply in order, traffic queued with publishLater/appendLater leaves with the next command
 * as one script call, and a script defined in the middle of a turn runs in it. (ioredis's own auto-pipelining, used before, hung the
 * whole connection in that last case: ioredis#1931, seen in bench:chat at 450 q/s.)
 * Writes are counted by redis-server itself: `total_reads_processed` of `INFO stats` (one per
 * socket read; a write of this process arrives in one read).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it, mock } from 'node:test';
import { Redis } from 'ioredis';
import { processOnPrivateRedis } from '../helpers/instances';

const ready = spawnSync('redis-server', ['--version']).status === 0;
let client: typeof import('../../lib/redis/client');
let close: () => Promise<void>;
let url = '';

before(
  async () => {
    if (!ready) return;
    const r = await processOnPrivateRedis('redis-writes');
    ({ client, close } = r);
    url = r.redis.url;
  },
  { timeout: 30_000 },
);

after(
  async () => {
    if (ready) await close();
  },
  { timeout: 30_000 },
);

/** EVALSHA and EVAL calls redis-server has served (INFO commandstats). */
async function scriptCalls(probe: Redis): Promise<number> {
  const info = await probe.info('commandstats');
  let n = 0;
  for (const m of info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)) n += Number(m[1]);
  return n;
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 5));
}

const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms))]);

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
      const replies = await within(
        Promise.all(Array.from({ length: 50 }, (_, i) => c.incrby(client.redisKey('turn'), i + 1))),
        3000,
        'one turn of 50 commands',
      );
      const reads = (await readsBy(probe)) - before - 1;
      assert.deepEqual(
        replies,
        Array.from({ length: 50 }, (_, i) => ((i + 1) * (i + 2)) / 2),
        'replies in order, one per command',
      );
      assert.ok(reads <= 2, `50 commands in one turn took ${reads} socket reads of redis-server (expected one write)`);
    } finally {
      probe.disconnect();
    }
  });

  it('queued traffic leaves with the next command, in one write and one script call, in order', async () => {
    const c = client.getRedis()!;
    const probe = new Redis(url);
    const sub = new Redis(url);
    try {
      const channel = client.redisKey('chan');
      const key = client.redisKey('live');
      const got: string[] = [];
      sub.on('smessage', (ch: string, message: string) => {
        if (ch === channel) got.push(message);
      });
      await sub.ssubscribe(channel);
      const reads0 = await readsBy(probe);
      const scripts0 = await scriptCalls(probe);
      for (let i = 0; i < 5; i++) {
        client.publishLater(channel, `m${i}`);
        client.appendLater(key, i, `e${i}`, 3, 60);
      }
      // The next command of this process (in the product: the next ask's limit check) carries them.
      assert.equal(await within(c.incr(client.redisKey('carrier')), 3000, 'the carrier'), 1);
      const reads = (await readsBy(probe)) - reads0 - 1;
      assert.ok(reads <= 2, `the carrier and 10 queued operations took ${reads} socket reads (expected one write)`);
      await within(
        until(() => got.length >= 5),
        3000,
        'the publications',
      );
      assert.deepEqual(got, ['m0', 'm1', 'm2', 'm3', 'm4'], 'every publication, in the order queued');
      assert.deepEqual(await probe.zrange(key, '0', '-1'), ['e2', 'e3', 'e4'], 'the newest 3 members kept');
      const ttl = await probe.ttl(key);
      assert.ok(ttl > 0 && ttl <= 60, `expiry set (ttl ${ttl})`);
      // One script call (a second only if redis-server did not know the script yet: EVALSHA, then EVAL).
      const scripts = (await scriptCalls(probe)) - scripts0;
      assert.ok(scripts >= 1 && scripts <= 2, `10 queued operations took ${scripts} script calls`);

      // With no command to ride on, the queue still leaves within SEND_LATER_MS.
      client.publishLater(channel, 'alone');
      await within(
        until(() => got.length >= 6),
        client.SEND_LATER_MS + 1000,
        'a lone publication',
      );
      assert.equal(got[5], 'alone');

      // What a person waits on leaves at the end of the turn: with every timer stopped (so
      // SEND_LATER_MS never comes), only sendLaterThisTurn can carry it.
      mock.timers.enable({ apis: ['setTimeout'] });
      try {
        client.publishLater(channel, 'a person waits');
        client.sendLaterThisTurn();
        for (let turn = 0; turn < 20_000 && got.length < 7; turn++) await new Promise((r) => setImmediate(r));
      } finally {
        mock.timers.reset();
      }
      assert.equal(got[6], 'a person waits', 'sent without the SEND_LATER_MS timer');

      // More than one batch's worth: several script calls, still in order, nothing lost.
      const many = Array.from({ length: client.LATER_BATCH * 2 + 7 }, (_, i) => `n${i}`);
      for (const m of many) client.publishLater(channel, m);
      await within(
        until(() => got.length >= 7 + many.length),
        5000,
        'a long queue',
      );
      assert.deepEqual(got.slice(7), many);
    } finally {
      probe.disconnect();
      sub.disconnect();
    }
  });

  it('a script defined in the middle of a turn runs in it, and the connection keeps answering', async () => {
    const c = client.getRedis()! as Redis & { svcPipelineLate(key: string, by: number): Promise<number> };
    const uncaught: Error[] = [];
    const onUncaught = (e: Error) => {
      uncaught.push(e);
    };
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
      assert.deepEqual(
        uncaught.map((e) => e.message),
        [],
      );
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
