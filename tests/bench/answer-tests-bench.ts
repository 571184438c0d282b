/**
 * `npm run bench:answer-tests` — a run of 100 answer tests (docs/contracts.md §20) with the built-in
 * engine on the demo account's knowledge base (goal ≤ 30 s), and whether it delays another
 * account's answers: another account asks a question every 100 ms during the run; its answer times
 * are compared with the same questions asked with no run going.
 *
 *   npm run bench:answer-tests [-- --cases 100]    (PGlite in a temporary folder, or DATABASE_URL)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { cases: { type: 'string', default: '100' } } });
const CASES = Number(values.cases);

const tmp = process.env.DATABASE_URL ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-tests-'));
if (tmp) process.env.DATA_DIR = tmp;
process.env.SVC_DEMO = '0';

// The modules read DATA_DIR when loaded: imported after it is set.
async function modules() {
  const [{ closeDatabase }, { seedDemoAccount }, tests, { answerEngine }, { addKnowledgeDocument }, { createAccount }] = await Promise.all([
    import('../../db/client'),
    import('../../lib/demo/seed'),
    import('../../lib/answer-tests/service'),
    import('../../lib/answers/engines'),
    import('../../lib/knowledge/service'),
    import('../../lib/accounts/service'),
  ]);
  return { closeDatabase, seedDemoAccount, ...tests, answerEngine, addKnowledgeDocument, createAccount };
}

/** The demo FAQ's questions, reworded, as cases of every kind (a fifth decline, a fifth mentions). */
const ASKED = [
  ['How do I reset my password?', 'Reset password'],
  ['What are your opening hours?', 'Monday to Friday'],
  ['Can I export my data?', 'CSV'],
  ['Do you offer a discount for non-profits?', '30%'],
  ['How do I change my billing address?', 'Billing'],
  ['Is my data stored in the EU?', 'Frankfurt'],
  ['How can I cancel my subscription?', 'cancel'],
  ['Which payment methods do you accept?', 'SEPA'],
  ['Where is my order?', 'tracking'],
  ['Can I use the café Wi-Fi guide offline?', 'PDF'],
] as const;
const OFF_TOPIC = ['What will the weather be tomorrow?', 'Tell me a joke about cats', 'Who won the football world cup in 1998?', 'What is 17 times 23?'];
const PREFIXES = ['', 'Hi, ', 'Quick question: ', 'Please tell me: ', 'Hello! '];

function csv(n: number): string {
  const lines = ['question,expect,value'];
  for (let i = 0; i < n; i++) {
    const prefix = PREFIXES[Math.floor(i / 10) % PREFIXES.length]!;
    if (i % 5 === 4) lines.push(`${OFF_TOPIC[i % OFF_TOPIC.length]} (${i}),declines,`);
    else if (i % 5 === 3) lines.push(`"${prefix}${ASKED[i % ASKED.length]![0]}",mentions,${ASKED[i % ASKED.length]![1]}`);
    else lines.push(`"${prefix}${ASKED[i % ASKED.length]![0]}",answers from,Demo Company FAQ`);
  }
  return `${lines.join('\n')}\n`;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function visitorAnswers(m: Awaited<ReturnType<typeof modules>>, accountId: number, until: () => boolean): Promise<number[]> {
  const times: number[] = [];
  let i = 0;
  while (!until()) {
    const started = performance.now();
    const a = await m.answerEngine().answer({
      accountId,
      conversationId: '00000000-0000-0000-0000-000000000000',
      question: ASKED[i++ % ASKED.length]![0],
      signal: AbortSignal.timeout(30_000),
    });
    for await (const _ of a.deltas);
    times.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 100));
  }
  return times;
}

async function main() {
  const m = await modules();
  const { seedDemoAccount, createAccount, addKnowledgeDocument, listAnswerTests, importAnswerTestsCsv, runAnswerTests } = m;
  try {
    const demo = await seedDemoAccount();
    const owner = { accountId: demo.account_id, role: 'owner' as const };
    const other = await createAccount({ name: 'Other', adminEmail: `other-${Date.now()}@bench.test`, adminPassword: 'bench password 1' });
    await addKnowledgeDocument(
      other.account_id,
      'faq.md',
      Buffer.from(`# Other FAQ\n\n${ASKED.map(([q, w]) => `## ${q}\n\nAbout that: ${w}, as described in our help centre.`).join('\n\n')}\n`),
    );
    const have = (await listAnswerTests(owner)).cases.length;
    await importAnswerTestsCsv(owner, csv(CASES - have));
    const total = (await listAnswerTests(owner)).cases.length;

    // Baseline: the other account's answers with no run going (warm).
    let stop = false;
    setTimeout(() => {
      stop = true;
    }, 5_000);
    const idle = await visitorAnswers(m, other.account_id, () => stop);

    let done = false;
    const during = visitorAnswers(m, other.account_id, () => done);
    const started = performance.now();
    const run = await runAnswerTests(owner);
    const seconds = (performance.now() - started) / 1000;
    done = true;
    const busy = await during;

    const load = os.loadavg().map((l) => l.toFixed(1));
    console.log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, load ${load.join(' ')}; ${process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`);
    console.log(`demo knowledge base: 1 document (${10} sections) + the seed's curated answers: none; cases: ${total}`);
    console.log(
      `run of ${total} cases: ${seconds.toFixed(1)} s (${((seconds * 1000) / total).toFixed(0)} ms per case), ${run.passed} passed, ${run.failed} failed`,
    );
    console.log(`goal ≤ 30 s: ${seconds <= 30 ? 'met' : 'MISSED'}`);
    console.log(
      `another account's answers: idle p50 ${pct(idle, 50).toFixed(1)} ms, p95 ${pct(idle, 95).toFixed(1)} ms (${idle.length}); during the run p50 ${pct(busy, 50).toFixed(1)} ms, p95 ${pct(busy, 95).toFixed(1)} ms, max ${Math.max(...busy).toFixed(1)} ms (${busy.length})`,
    );
    if (run.failed > 0)
      console.log(
        `failed: ${run.cases
          .filter((c) => !c.passed)
          .map((c) => `${c.question} (${c.expect} ${c.value} → ${c.first_source})`)
          .join('; ')}`,
      );
  } finally {
    await m.closeDatabase();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
