/**
 * The per-answer cost, counted: SQL statements and transactions a widget question costs from ask
 * to answer.done, through the real socket on a real server. Fails when a change makes either
 * worse by more than 20 % against tests/answer-cost-baseline.json (issue 37: the answer path once
 * gained a third of its CPU unnoticed). After a deliberate change, update the baseline with the
 * figures this test prints.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { databaseCounts, recordStatements } from '../../db/client';
import { FAQ, QUESTIONS as BENCH_QUESTIONS } from '../bench/chat-knowledge';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { addKnowledge, backendToken, connectVisitor, createTestWidgetClient } from '../helpers/widget';

const BASELINE = path.join(__dirname, '..', 'answer-cost-baseline.json');
const ALLOWED = 1.2;
const QUESTIONS = BENCH_QUESTIONS.length;

let server: TestServer;
before(
  async () => {
    // Long leases: the lease loop's renewals stay out of the count.
    server = await startTestServer({ CHAT_ANSWER_LEASE_SECONDS: '300', ASKS_PER_MINUTE_PER_VISITOR: '1000', DATABASE_COUNT_STATEMENTS: '1' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

type AskAck = { conversation_id: string; response_id: string };

/** With ANSWER_COST_CPU_PROF=DIR, a CPU profile of the measured questions (docs/benchmarks/answer-path.md). */
async function startProfile(): Promise<(() => Promise<void>) | null> {
  const dir = process.env.ANSWER_COST_CPU_PROF;
  if (!dir) return null;
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `answer-cost-${server.kind}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

it('a widget answer costs no more statements and transactions than the baseline allows', { timeout: 60_000 }, async () => {
  const acct = await createTestAccount();
  await addKnowledge(acct.accountId, 'faq.md', FAQ); // the chat benchmark's knowledge and questions
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const visitor = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, 'https://example.com');
  try {
    // One question first: it starts the conversation and warms the per-account caches, as a busy widget has them.
    const first = await visitor.ok<AskAck>('ask', { client_message_id: 'warm', text: BENCH_QUESTIONS[0] });
    await visitor.finished(first.response_id);
    const stop = recordStatements();
    const profiler = await startProfile();
    const cpu = process.cpuUsage();
    const start = databaseCounts();
    for (let i = 0; i < QUESTIONS; i++) {
      const ack = await visitor.ok<AskAck>('ask', { conversation_id: first.conversation_id, client_message_id: `q${i}`, text: BENCH_QUESTIONS[i] });
      const end = await visitor.finished(ack.response_id);
      assert.equal(end.type, 'answer.done');
    }
    const end = databaseCounts();
    const used = process.cpuUsage(cpu);
    await profiler?.();
    const log = stop();
    const measured = {
      statements: (end.statements - start.statements) / QUESTIONS,
      transactions: (end.transactions - start.transactions) / QUESTIONS,
    };
    const baseline = (JSON.parse(fs.readFileSync(BASELINE, 'utf8')) as Record<string, typeof measured>)[server.kind]!;
    console.log(`answer cost on ${server.kind}: ${JSON.stringify(measured)} per answer (baseline ${JSON.stringify(baseline)})`);
    // Timed, so printed, never checked: this process is the server and the visitor (and, on PGlite, the database).
    console.log(`CPU of this process per answer: ${((used.user + used.system) / 1000 / QUESTIONS).toFixed(2)} ms`);
    const byText = new Map<string, number>();
    for (const q of log) byText.set(q.replace(/\s+/g, ' ').slice(0, 160), (byText.get(q.replace(/\s+/g, ' ').slice(0, 160)) ?? 0) + 1);
    const profile = [...byText].sort((a, b) => b[1] - a[1]).map(([q, n]) => `${(n / QUESTIONS).toFixed(2)} × ${q}`);
    if (process.env.ANSWER_COST_PROFILE) console.log(profile.join('\n'));
    for (const k of ['statements', 'transactions'] as const) {
      assert.ok(measured[k] <= baseline[k] * ALLOWED + 0.01, `${k} per answer ${measured[k]} > ${ALLOWED}× the baseline ${baseline[k]}`);
    }
  } finally {
    visitor.close();
  }
});
