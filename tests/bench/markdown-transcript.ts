/**
 * A transcript with 20 hostile questions (tests/fixtures/hostile-markdown.ts) rendered by the
 * production server while another account lists its responses every 25 ms through the Customer
 * API: the transcript's time and the other account's latencies. Needs `npm run build` first.
 *   node --import tsx tests/bench/markdown-transcript.ts [rounds] [--plain]
 * --plain: 20 plain questions of the same length instead (the baseline without Markdown).
 * The server and both clients share this process (as one instance serves everyone).
 */
import os from 'node:os';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { startTestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import { hostileMarkdown } from '../fixtures/hostile-markdown';

const rounds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 3);
const PLAIN = process.argv.includes('--plain');
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function main() {
  const server = await startTestServer();
  try {
    console.log(
      JSON.stringify({
        machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`,
        node: process.version,
        db: server.kind,
        load: os.loadavg().map((x) => +x.toFixed(2)),
        at: new Date().toISOString(),
      }),
    );
    const hostile = await createTestAccount('Hostile visitors');
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    const questions = hostileMarkdown
      .filter((h) => !h.name.startsWith('3,000'))
      .slice(0, 20)
      .map((h) => (PLAIN ? { ...h, text: 'Plain words. '.repeat(400).slice(0, h.text.length) } : h));
    await importLines(hostile.accountId, [
      conv,
      ...questions.map((q, i) => responseLine(conv, { question: q.text, created_at: `2026-01-01 10:${String(i).padStart(2, '0')}:00` })),
    ]);
    const other = await createTestAccount('Another account');
    const [ch2] = await newChannelIds(1);
    const conv2 = conversationLine({ channel_id: ch2! });
    await importLines(other.accountId, [conv2, responseLine(conv2)]);
    const session = await signIn(server.url, hostile.email, hostile.password);
    const cookie = session.cookie!;
    const list = async () => {
      const t = performance.now();
      const res = await fetch(`${server.url}/customer-api/v2/response`, { headers: { authorization: `Bearer ${other.key}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`list: ${res.status}`);
      return performance.now() - t;
    };
    const idle: number[] = [];
    for (let i = 0; i < 20; i++) idle.push(await list());
    const page = async (id: string) => {
      const cpu = process.cpuUsage();
      const t = performance.now();
      const res = await fetch(`${server.url}/conversations/${id}`, { headers: { cookie } });
      const html = await res.text();
      const used = process.cpuUsage(cpu);
      return { status: res.status, ms: performance.now() - t, cpu_ms: (used.user + used.system) / 1000, kb: html.length / 1024 };
    };
    await page(conv.conversation_id); // compiles and warms the page
    for (let r = 0; r < rounds; r++) {
      const alone = await page(conv.conversation_id);
      let stop = false;
      const during: number[] = [];
      const poller = (async () => {
        while (!stop) {
          during.push(await list());
          await new Promise((res) => setTimeout(res, 25));
        }
      })();
      await new Promise((res) => setTimeout(res, 100));
      const shared = await page(conv.conversation_id);
      stop = true;
      await poller;
      console.log(
        JSON.stringify({
          round: r + 1,
          transcript_status: shared.status,
          transcript_kb: Math.round(alone.kb),
          alone_ms: Math.round(alone.ms),
          alone_cpu_ms: Math.round(alone.cpu_ms),
          transcript_ms: Math.round(shared.ms),
          other_idle_p50_ms: +pct(idle, 0.5).toFixed(1),
          other_during_p50_ms: +pct(during, 0.5).toFixed(1),
          other_during_max_ms: +Math.max(...during).toFixed(1),
          other_calls: during.length,
        }),
      );
    }
    // A long conversation: 2,000 ordinary responses (a short question, an answer with a list and a link).
    const conv4 = conversationLine({ channel_id: ch! });
    await importLines(hostile.accountId, [
      conv4,
      ...Array.from({ length: 2000 }, (_, i) =>
        responseLine(conv4, {
          question: `How do I export **report ${i}**?`,
          answer: `Open *Reports*, then:\n\n1. choose ${i}\n2. press **Export**\n\nSee [the guide](https://example.com/guide/${i}).`,
          created_at: `2026-01-0${1 + Math.floor(i / 1000)} ${String(Math.floor(i / 60) % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00`,
        }),
      ),
    ]);
    const long = await page(conv4.conversation_id);
    console.log(
      JSON.stringify({ case: '2,000 responses', status: long.status, ms: Math.round(long.ms), cpu_ms: Math.round(long.cpu_ms), kb: Math.round(long.kb) }),
    );
    // The 3,000 ">" question alone (a 500 before).
    const conv3 = conversationLine({ channel_id: ch! });
    await importLines(hostile.accountId, [conv3, responseLine(conv3, { question: hostileMarkdown[0]!.text })]);
    const deep = await page(conv3.conversation_id);
    console.log(JSON.stringify({ case: '3,000 ">"', status: deep.status, ms: Math.round(deep.ms), cpu_ms: Math.round(deep.cpu_ms) }));
  } finally {
    await server.close();
  }
}

void main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
