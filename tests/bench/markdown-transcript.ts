/**
 * A transcript with 20 hostile questions (tests/fixtures/hostile-markdown.ts) rendered by the
 * production server while another account lists its responses every 25 ms through the Customer
 * API: the transcript's time and the other account's latencies. Needs `npm run build` first.
 *   node --import tsx tests/bench/markdown-transcript.ts [rounds]
 * The server and both clients share this process (as one instance serves everyone).
 */
import os from 'node:os';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { startTestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import { hostileMarkdown } from '../fixtures/hostile-markdown';

const rounds = Number(process.argv[2] ?? 3);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function main() {
  const server = await startTestServer();
  try {
    console.log(JSON.stringify({ machine: `${os.cpus().length} × ${os.cpus()[0]?.model}`, node: process.version, db: server.kind, load: os.loadavg().map((x) => +x.toFixed(2)), at: new Date().toISOString() }));
    const hostile = await createTestAccount('Hostile visitors');
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    const questions = hostileMarkdown.filter((h) => !h.name.startsWith('3,000')).slice(0, 20);
    await importLines(hostile.accountId, [conv, ...questions.map((q, i) => responseLine(conv, { question: q.text, created_at: `2026-01-01 10:${String(i).padStart(2, '0')}:00` }))]);
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
    for (let r = 0; r < rounds; r++) {
      let stop = false;
      const during: number[] = [];
      const poller = (async () => { while (!stop) { during.push(await list()); await new Promise((res) => setTimeout(res, 25)); } })();
      await new Promise((res) => setTimeout(res, 100));
      const t = performance.now();
      const res = await fetch(`${server.url}/conversations/${conv.conversation_id}`, { headers: { cookie } });
      const html = await res.text();
      const ms = performance.now() - t;
      stop = true;
      await poller;
      console.log(JSON.stringify({ round: r + 1, transcript_status: res.status, transcript_ms: Math.round(ms), transcript_kb: Math.round(html.length / 1024),
        other_idle_p50_ms: +pct(idle, 0.5).toFixed(1), other_during_p50_ms: +pct(during, 0.5).toFixed(1), other_during_max_ms: +Math.max(...during).toFixed(1), other_calls: during.length }));
    }
    // The 3,000 ">" question alone (a 500 before).
    const conv3 = conversationLine({ channel_id: ch! });
    await importLines(hostile.accountId, [conv3, responseLine(conv3, { question: hostileMarkdown[0]!.text })]);
    const t = performance.now();
    const res = await fetch(`${server.url}/conversations/${conv3.conversation_id}`, { headers: { cookie } });
    await res.text();
    console.log(JSON.stringify({ case: '3,000 ">"', status: res.status, ms: Math.round(performance.now() - t) }));
  } finally {
    await server.close();
  }
}

void main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
