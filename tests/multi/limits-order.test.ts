/**
 * The ask limits' ordered check (lib/limits/limiter.ts `consumeInOrder`) against a real Redis: one
 * round trip for per-visitor, per-address and per-client, with the semantics of three sequential
 * rate-limiter-flexible consumes — a later (shared) budget is charged only when every earlier one
 * passed — on the very keys the library's limiters use; and, while Redis is away, the in-memory
 * insurance in the same order.
 *
 * Runs in this process on a private redis-server (the test stops it); needs `redis-server` (the
 * multi-instance step of scripts/test.mjs has it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { processOnPrivateRedis, type PrivateRedis } from '../helpers/instances';

const ready = spawnSync('redis-server', ['--version']).status === 0;
let redis: PrivateRedis;
let lib: typeof import('../../lib/limits/limiter');
let client: typeof import('../../lib/redis/client');
let close: () => Promise<void>;

before(
  async () => {
    if (!ready) return;
    ({ redis, client, close } = await processOnPrivateRedis('limits-order'));
    lib = await import('../../lib/limits/limiter');
  },
  { timeout: 30_000 },
);

after(
  async () => {
    if (ready) await close();
  },
  { timeout: 30_000 },
);

const rules = { visitor: { points: 2, durationSeconds: 60 }, address: { points: 100, durationSeconds: 60 }, client: { points: 3, durationSeconds: 60 } };

function limiters(tag: string) {
  return {
    visitor: lib.getLimiter(`${tag}-visitor`, rules.visitor),
    address: lib.getLimiter(`${tag}-address`, rules.address),
    client: lib.getLimiter(`${tag}-client`, rules.client),
  };
}

describe('ask limits checked in order in one Redis round trip', { skip: !ready && 'redis-server is not installed' }, () => {
  it('a refused visitor never spends the shared budgets; a refused address never spends the client one', async () => {
    const l = limiters('order');
    const ask = (visitor: string, address: string) =>
      lib.consumeInOrder([
        [l.visitor, visitor],
        [l.address, address],
        [l.client, 'c1'],
      ]);
    // Visitor A floods: 2 pass, the next 5 are refused by its own limit.
    const a = [];
    for (let i = 0; i < 7; i++) a.push(await ask('A', '10.0.0.1'));
    assert.deepEqual(
      a.map((r) => r.allowed),
      [true, true, false, false, false, false, false],
    );
    assert.deepEqual(
      a.slice(2).map((r) => r.limiter),
      Array(5).fill('order-visitor'),
    );
    const refused = a[2]!;
    assert.ok(!refused.allowed && refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 60, JSON.stringify(refused));
    // Only A's two accepted asks reached the shared budgets (the library's own peek reads the same keys).
    assert.equal(await l.address.peek('10.0.0.1'), 98);
    assert.equal(await l.client.peek('c1'), 1);
    assert.equal(await l.visitor.peek('A'), 0);
    // Visitor B takes the client's last point, then is refused by the client limit.
    const b1 = await ask('B', '10.0.0.2');
    assert.ok(b1.allowed && b1.remaining === 0, JSON.stringify(b1));
    const b2 = await ask('B', '10.0.0.2');
    assert.equal(b2.allowed, false);
    assert.equal(b2.limiter, 'order-client');
    // B's visitor and address budgets were charged by both (they come first), the client stays spent.
    assert.equal(await l.visitor.peek('B'), 0);
    assert.equal(await l.address.peek('10.0.0.2'), 98);
    assert.equal(await l.client.peek('c1'), 0);
  });

  it('a refused address never spends the client budget', async () => {
    const v = lib.getLimiter('addr-visitor', rules.visitor);
    const a = lib.getLimiter('addr-address', { points: 1, durationSeconds: 60 });
    const c = lib.getLimiter('addr-client', rules.client);
    const first = await lib.consumeInOrder([
      [v, 'V1'],
      [a, '10.0.0.9'],
      [c, 'c'],
    ]);
    const second = await lib.consumeInOrder([
      [v, 'V2'],
      [a, '10.0.0.9'],
      [c, 'c'],
    ]);
    assert.ok(first.allowed);
    assert.deepEqual([second.allowed, second.limiter], [false, 'addr-address']);
    assert.equal(await c.peek('c'), 2);
    assert.equal(await v.peek('V2'), 1);
  });

  it('one count with the library: its consume and reset act on the same keys', async () => {
    const l = limiters('shared');
    const r1 = await lib.consumeInOrder([
      [l.visitor, 'V'],
      [l.address, 'a'],
      [l.client, 'c'],
    ]);
    assert.ok(r1.allowed);
    // The library's own consume sees the point charged by the script.
    assert.deepEqual(await l.visitor.consume('V'), { allowed: true, remaining: 0 });
    const r2 = await lib.consumeInOrder([
      [l.visitor, 'V'],
      [l.address, 'a'],
      [l.client, 'c'],
    ]);
    assert.equal(r2.allowed, false);
    await l.visitor.reset('V');
    assert.ok(
      (
        await lib.consumeInOrder([
          [l.visitor, 'V'],
          [l.address, 'a'],
          [l.client, 'c'],
        ])
      ).allowed,
    );
    assert.equal(await l.client.peek('c'), 1);
    // The keys live in Redis under the deployment's prefix, with the window's expiry.
    const ttl = await client.getRedis()!.pttl(`${process.env.REDIS_PREFIX}limit:shared-client:c`);
    assert.ok(ttl > 50_000 && ttl <= 60_000, `ttl ${ttl}`);
  });

  it('while Redis is away the insurance limiters answer at once, in the same order', async () => {
    const l = limiters('away');
    await redis.stop();
    const c = client.getRedis()!;
    for (let i = 0; i < 50 && c.status === 'ready'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.notEqual(c.status, 'ready');
    const started = Date.now();
    const results = [];
    for (let i = 0; i < 4; i++)
      results.push(
        await lib.consumeInOrder([
          [l.visitor, 'X'],
          [l.address, 'a'],
          [l.client, 'c'],
        ]),
      );
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    assert.deepEqual(
      results.map((r) => r.allowed),
      [true, true, false, false],
    );
    assert.equal(results[2]!.limiter, 'away-visitor');
    // Visitor Y: the client limit (3) refuses its second ask; X's refused asks did not spend it.
    const y = [
      await lib.consumeInOrder([
        [l.visitor, 'Y'],
        [l.address, 'a'],
        [l.client, 'c'],
      ]),
      await lib.consumeInOrder([
        [l.visitor, 'Y'],
        [l.address, 'a'],
        [l.client, 'c'],
      ]),
    ];
    assert.deepEqual(
      y.map((r) => [r.allowed, r.limiter]),
      [
        [true, undefined],
        [false, 'away-client'],
      ],
    );
    // Redis back: the shared count resumes there (the connection reconnects by itself).
    await redis.start();
    assert.ok(await client.whenReady(client.getRedis()!, 10_000), 'reconnected');
    const back = await lib.consumeInOrder([
      [l.visitor, 'Z'],
      [l.address, 'a'],
      [l.client, 'c'],
    ]);
    assert.ok(back.allowed);
    assert.equal(await l.client.peek('c'), 2);
  });
});
