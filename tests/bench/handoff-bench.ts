/**
 * Human handoff across two instances (issue 26 "Speed"): PostgreSQL + Redis, members' `/inbox`
 * sockets on instance A, visitors' `/widget` sockets on instance B. HANDOFFS visitors ask for a
 * person in words; MEMBERS members watch. Measured:
 *   - counts: from a visitor's handoff ask to every member holding the new Waiting count, which
 *     `inbox:changed` carries (read once on the instance that made the change; the page applies it at once);
 *   - replies: from a member's `conversation:reply` to the visitor's `agent.message` on the other
 *     instance, one at a time, then CONCURRENCY members replying at once;
 *   - CPU: both instances' user+system time (/proc/<pid>/stat) over the concurrent replies, per reply.
 * The "Waiting" view on 1M conversations is tests/bench/inbox-bench.ts (BENCHMARKS.md "Inbox views").
 * Loopback only; stops by itself.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/he_bench REDIS_URL=redis://127.0.0.1:6379/9 \
 *     npm run bench:handoff [-- HANDOFFS MEMBERS]
 */
import { CLI } from '../../lib/audit/contract';
import { randomUUID } from 'node:crypto';
import { cpuSeconds, latencyLine, startRun } from './stats';

if (!process.env.DATABASE_URL || !process.env.REDIS_URL) {
  console.error('needs DATABASE_URL (an empty PostgreSQL database) and REDIS_URL');
  process.exit(2);
}
process.env.TEST_DB = 'postgres';
process.env.REDIS_PREFIX ??= `he:bench-${process.pid}:`;

const nums = process.argv
  .slice(2)
  .filter((a) => /^\d+$/.test(a))
  .map(Number);
const HANDOFFS = nums[0] ?? 1000;
const MEMBERS = nums[1] ?? 50;
const COUNT_SAMPLES = Math.min(100, HANDOFFS);
const CONCURRENCY = 10;
const HUMAN = 'Can I speak to a human please?';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function inBatches<T, R>(items: T[], size: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map((x, k) => fn(x, i + k)))));
  return out;
}

async function main() {
  const { startInstances } = await import('../helpers/instances');
  const { createTestAccount } = await import('../helpers/builders');
  const { createAdminUser } = await import('../../lib/accounts/service');
  const { signIn } = await import('../helpers/signin');
  const { connectMember } = await import('../helpers/inbox');
  const { backendToken, connectVisitor, createTestWidgetClient } = await import('../helpers/widget');
  const { closeDatabase } = await import('../../db/client');
  const { closeRedis } = await import('../../lib/redis/client');

  const run = startRun();
  const cluster = await startInstances(2, {
    DATABASE_URL: process.env.DATABASE_URL!,
    REDIS_URL: process.env.REDIS_URL!,
    REDIS_PREFIX: process.env.REDIS_PREFIX!,
    TOKEN_RATE_PER_IP_PER_MINUTE: '1000000',
    TOKEN_RATE_PER_CLIENT_PER_MINUTE: '1000000',
    ASKS_PER_MINUTE_PER_ADDRESS: '1000000',
    ASKS_PER_MINUTE_PER_CLIENT: '1000000',
    SOCKET_EVENTS_PER_10S: '100000',
    WIDGET_SOCKETS_PER_ADDRESS: '100000',
    LOG_LEVEL: 'warn',
  });
  const [A, B] = cluster.instances as [NonNullable<(typeof cluster.instances)[0]>, NonNullable<(typeof cluster.instances)[0]>];
  const closers: Array<() => void> = [];
  try {
    const acct = await createTestAccount('Handoff bench');
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);

    const t0 = Date.now();
    const members = await inBatches(
      Array.from({ length: MEMBERS }, (_, i) => i),
      10,
      async (i) => {
        const email = `member${i}-${randomUUID()}@bench.test`;
        await createAdminUser(CLI, { accountId: acct.accountId, email, password: 'member password', role: 'agent', name: `Member ${i}` });
        const cookie = (await signIn(A.url, email, 'member password')).cookie!;
        const m = await connectMember(A.url, cookie);
        closers.push(() => m.close());
        return m;
      },
    );
    console.log(`${MEMBERS} members on A in ${Date.now() - t0} ms`);

    const t1 = Date.now();
    const visitors = await inBatches(
      Array.from({ length: HANDOFFS }, (_, i) => i),
      25,
      async () => {
        const issued = await backendToken(B.url, client, `v_${randomUUID().replace(/-/g, '')}`);
        const v = await connectVisitor(B.url, issued.access_token, 'https://example.com');
        closers.push(() => v.close());
        return v;
      },
    );
    console.log(`${HANDOFFS} visitors on B in ${Date.now() - t1} ms`);

    // Counts: one handoff at a time; the change carries every member's counts.
    const countMs: number[] = [];
    const pushMs: number[] = [];
    const conversations: string[] = [];
    for (let i = 0; i < HANDOFFS; i++) {
      const v = visitors[i]!;
      if (i >= COUNT_SAMPLES) {
        conversations.push('');
        continue;
      }
      const expected = i + 1;
      const sent = performance.now();
      const heard: number[] = [];
      const reads = members.map(
        (m) =>
          new Promise<number>((resolve, reject) => {
            let first = true;
            const onChanged = (p: { counts?: { waiting: number } }) => {
              if (first) heard.push(performance.now() - sent);
              first = false;
              if ((p.counts?.waiting ?? 0) >= expected) {
                m.socket.off('inbox:changed', onChanged);
                resolve(performance.now() - sent);
              }
            };
            m.socket.on('inbox:changed', onChanged);
            setTimeout(() => reject(new Error(`member never saw Waiting ${expected}`)), 15_000);
          }),
      );
      const ack = await v.ok<{ conversation_id: string }>('ask', { client_message_id: 'h', text: HUMAN });
      conversations.push(ack.conversation_id);
      const all = await Promise.all(reads);
      countMs.push(Math.max(...all));
      pushMs.push(Math.max(...heard));
    }
    // The rest hand off in bursts (no measurement).
    await inBatches(visitors.slice(COUNT_SAMPLES), 25, async (v, k) => {
      const ack = await v.ok<{ conversation_id: string }>('ask', { client_message_id: 'h', text: HUMAN });
      conversations[COUNT_SAMPLES + k] = ack.conversation_id;
    });
    console.log(`handoff ask → inbox:changed at every member (slowest of ${MEMBERS}): ${latencyLine(pushMs)}`);
    console.log(`handoff ask → the new count pushed to every member (slowest of ${MEMBERS}): ${latencyLine(countMs)}`);
    // The instances' first change runs cold code; the rest is what a running pair does.
    console.log(`  of which the first handoff (cold) ${countMs[0]!.toFixed(1)} ms; the other ${countMs.length - 1}: ${latencyLine(countMs.slice(1))}`);

    // Take-overs, spread over the members.
    await inBatches(conversations, 20, async (id, i) => members[i % MEMBERS]!.ok('conversation:take_over', { conversation_id: id }));

    // Replies: first SEQUENTIAL one at a time (latency alone), then CONCURRENCY members at once (CPU measured there).
    const SEQUENTIAL = Math.min(200, Math.floor(HANDOFFS / 5));
    async function replies(from: number, to: number, lanes: number): Promise<number[]> {
      const ms: number[] = [];
      let next = from;
      await Promise.all(
        Array.from({ length: lanes }, async () => {
          for (let i = next++; i < to; i = next++) {
            const v = visitors[i]!;
            const text = `Reply ${i} from the team`;
            const sent = performance.now();
            const arrived = v.until(() => v.events.some((e) => e.type === 'agent.message' && (e as { text?: string }).text === text), `reply ${i}`, 15_000);
            // As the page sends it: with its client_message_id (the resend key's lookup is part of the path).
            await members[i % MEMBERS]!.ok('conversation:reply', { conversation_id: conversations[i], client_message_id: `bench-${i}`, text });
            await arrived;
            ms.push(performance.now() - sent);
          }
        }),
      );
      return ms;
    }
    console.log(`member reply → visitor socket, one at a time: ${latencyLine(await replies(0, SEQUENTIAL, 1))}`);
    const cpu0 = [cpuSeconds(A.child!.pid!), cpuSeconds(B.child!.pid!)];
    const wall0 = performance.now();
    const concurrent = await replies(SEQUENTIAL, HANDOFFS, CONCURRENCY);
    const n = HANDOFFS - SEQUENTIAL;
    const wall = (performance.now() - wall0) / 1000;
    const cpu1 = [cpuSeconds(A.child!.pid!), cpuSeconds(B.child!.pid!)];
    const cpuA = cpu1[0]! - cpu0[0]!;
    const cpuB = cpu1[1]! - cpu0[1]!;
    console.log(`member reply → visitor socket, ${CONCURRENCY} at once: ${latencyLine(concurrent)}`);
    console.log(
      `CPU over ${n} replies in ${wall.toFixed(1)} s (${(n / wall).toFixed(0)}/s): A (members) ${cpuA.toFixed(2)} s, B (visitors) ${cpuB.toFixed(2)} s; ` +
        `${(((cpuA + cpuB) / n) * 1000).toFixed(2)} ms per reply (A ${((cpuA / n) * 1000).toFixed(2)}, B ${((cpuB / n) * 1000).toFixed(2)})`,
    );
    console.log(run.line());
  } finally {
    for (const c of closers) c();
    await sleep(200);
    await cluster.close();
    await closeRedis().catch(() => {});
    await closeDatabase().catch(() => {});
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
