/**
 * The instance CPU of one answer's Redis traffic, isolated from the rest of an answer (issue 10
 * item 9; BENCHMARKS.md run 10). bench:chat measures whole answers, whose CPU moves by ±10 % between
 * windows on this machine: a change of a few tens of µs per answer cannot show there.
 *
 * One process, one real Redis (REDIS_URL, default db 7, a key prefix of this run). An "answer" is
 * the traffic svc sends for one: a limit-check script (the carrier, awaited), 4 publications
 * (question, 2 deltas, done; adapter-shaped JSON) and 2 live-buffer appends. Two ways to send them,
 * alternated per round (order swapped every round), N answers each, back to back (or `pace` ms
 * apart: at low rates the VM's wake-ups from idle dominate and the figures scatter by ±50 %):
 *   separate  one command per operation (SPUBLISH, a live-append script), as before run 10
 *   script    publishLater/appendLater: one script call per flush (lib/redis/client.ts)
 * both in the carrier's write (writeOncePerTurn). With a subscriber connection in the same process
 * subscribed to the channel, as an instance with a socket in that conversation is (its own
 * publications come back to it); NO_SUB=1 leaves it unsubscribed, to measure what the echoes cost.
 * Prints process CPU (user + system) per answer per round and the medians.
 *
 *   node --import tsx tests/bench/redis-traffic-bench.ts [answers per round, 1000] [rounds, 10] [pace ms, 0]
 */
import { Redis } from 'ioredis';

process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/7';
process.env.REDIS_PREFIX ??= `rtb${process.pid}:`;

const LIVE_LUA = `
redis.call('zadd', KEYS[1], ARGV[1], ARGV[2])
redis.call('zremrangebyrank', KEYS[1], 0, -tonumber(ARGV[3]) - 1)
redis.call('expire', KEYS[1], ARGV[4])
return 1`;
const LIMIT_LUA = `return redis.call('incrby', KEYS[1], 1)`;
type BenchRedis = Redis & {
  rtbLive(key: string, score: number, member: string, keep: number, ttl: number): Promise<number>;
  rtbLimit(key: string): Promise<number>;
};
type Mode = 'separate' | 'script';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const text = 'Our store opens at nine and closes at six on weekdays. '.repeat(3);
const payload = (seq: number, type: string) =>
  JSON.stringify({
    type: 2,
    data: {
      packet: { type: 2, data: ['event', { type, conversation_id: 'c0a8f1d2-1111-4222-8333-444455556666', seq, text }], nsp: '/' },
      opts: { rooms: ['conv:x'], except: [], flags: {} },
    },
    uid: 'abcdef',
    nsp: '/',
  });

async function main(): Promise<void> {
  const client = await import('../../lib/redis/client');
  const answers = Number(process.argv[2] ?? 1000);
  const rounds = Number(process.argv[3] ?? 10);
  const pace = Number(process.argv[4] ?? 0);
  const r = client.getRedis()! as BenchRedis;
  r.defineCommand('rtbLive', { numberOfKeys: 1, lua: LIVE_LUA });
  r.defineCommand('rtbLimit', { numberOfKeys: 1, lua: LIMIT_LUA });
  const channel = client.redisKey('sio#/#conv:x#');
  const live = client.redisKey('live');
  const sub = new Redis(process.env.REDIS_URL!);
  let echoes = 0;
  sub.on('smessageBuffer', () => {
    echoes++;
  });
  if (!process.env.NO_SUB) await sub.ssubscribe(channel);
  await sleep(200);

  const perAnswer: Record<Mode, number[]> = { separate: [], script: [] };
  for (let round = 0; round < rounds; round++) {
    for (const mode of (round % 2 ? ['script', 'separate'] : ['separate', 'script']) as Mode[]) {
      const c0 = process.cpuUsage();
      for (let i = 0; i < answers; i++) {
        const check = r.rtbLimit(client.redisKey('limit'));
        for (const [type, k] of [
          ['question', 0],
          ['answer.delta', 1],
          ['answer.delta', 2],
          ['answer.done', 3],
        ] as const) {
          const seq = i * 4 + k;
          const p = payload(seq, type);
          if (mode === 'separate') {
            r.spublish(channel, p).catch(() => {});
            if (type === 'answer.delta') r.rtbLive(live, seq, p, 2000, 600).catch(() => {});
          } else {
            client.publishLater(channel, p);
            if (type === 'answer.delta') client.appendLater(live, seq, p, 2000, 600);
          }
        }
        await check;
        if (pace) await sleep(pace);
      }
      const c = process.cpuUsage(c0);
      perAnswer[mode].push((c.user + c.system) / answers);
    }
  }
  await sleep(200);
  const fmt = (a: number[]) => a.map((v) => v.toFixed(0)).join(' ');
  console.log(
    `subscribed to its own channel: ${process.env.NO_SUB ? 'no' : 'yes'}; ${answers} answers × ${rounds} rounds per mode, ${pace ? `${pace} ms apart` : 'back to back'}; own echoes received: ${echoes}`,
  );
  console.log(`separate µs/answer per round: ${fmt(perAnswer.separate)}`);
  console.log(`script   µs/answer per round: ${fmt(perAnswer.script)}`);
  const lower = perAnswer.script.filter((v, i) => v < perAnswer.separate[i]!).length;
  console.log(
    `median: separate ${median(perAnswer.separate).toFixed(1)} µs, script ${median(perAnswer.script).toFixed(1)} µs; script lower in ${lower} of ${rounds} rounds`,
  );
  await r.del(live, client.redisKey('limit'));
  sub.disconnect();
  await client.closeRedis();
}

void main();
