/**
 * The command connection's auto-pipelining against a real Redis (lib/redis/client.ts): a custom
 * command defined while an auto-pipeline is pending (ioredis#1931) must neither hang that
 * pipeline nor every later command of the connection. Before the fix an instance stopped
 * answering under load: rate-limiter-flexible defines its script when a limiter is built, and
 * svc's scripts are defined on first use, both possibly in a tick whose pipeline already exists.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { processOnPrivateRedis } from '../helpers/instances';

const ready = spawnSync('redis-server', ['--version']).status === 0;
let client: typeof import('../../lib/redis/client');
let close: () => Promise<void>;

before(async () => {
  if (ready) ({ client, close } = await processOnPrivateRedis('redis-pipeline'));
}, { timeout: 30_000 });

after(async () => {
  if (ready) await close();
}, { timeout: 30_000 });

const within = <T>(p: Promise<T>, ms: number, what: string) => Promise.race([
  p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)),
]);

describe('auto-pipelining on the command connection', { skip: !ready && 'redis-server is not installed' }, () => {
  it('a script defined while a pipeline is pending runs in it, and the connection keeps answering', async () => {
    const c = client.getRedis()! as Redis & { svcPipelineLate(key: string, by: number): Promise<number> };
    const uncaught: Error[] = [];
    const onUncaught = (e: Error) => { uncaught.push(e); };
    process.on('uncaughtException', onUncaught);
    try {
      // One tick: a plain command opens the pipeline, then a script is defined and called.
      const first = c.set(client.redisKey('a'), '1');
      c.defineCommand('svcPipelineLate', { numberOfKeys: 1, lua: "return redis.call('incrby', KEYS[1], ARGV[1])" });
      const late = c.svcPipelineLate(client.redisKey('n'), 5);
      const also = c.get(client.redisKey('a'));
      assert.deepEqual(await within(Promise.all([first, late, also]), 3000, 'the pending pipeline'), ['OK', 5, '1']);
      // Every later command still gets its answer (before the fix they waited for ever).
      assert.equal(await within(c.incrby(client.redisKey('n'), 1), 3000, 'a later command'), 6);
      assert.equal(await within(c.svcPipelineLate(client.redisKey('n'), 2), 3000, 'the script later'), 8);
      assert.deepEqual(uncaught.map((e) => e.message), []);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
