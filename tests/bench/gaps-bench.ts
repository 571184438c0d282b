/**
 * `npm run bench:gaps` — content-gap grouping (lib/insights/gaps.ts) on planted declined questions:
 * 1,000 and 4,000 questions of 3–10 words drawn from a 3,000-word vocabulary (Zipf-like, so a few
 * words are in most questions, as "order" is), plus repeats of a few frequent questions. Times the
 * pure grouping (what runs on the main thread per page view) and prints comparisons made.
 *
 *   npm run bench:gaps [-- --sizes 1000,4000 --runs 3]
 *   npm run bench:gaps -- --db     also plants them as declined answers in an embedded database
 *                                  (PGlite, a temporary folder) and times what the page reads and groups
 */
import { parseArgs } from 'node:util';
import type { GapRow } from '../../db/queries/insights';
import { groupGapQuestions, readContentGaps } from '../../lib/insights/gaps';

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '1000,4000' }, runs: { type: 'string', default: '3' }, db: { type: 'boolean', default: false } },
});

/** A deterministic generator (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function plant(n: number): GapRow[] {
  const rand = rng(n);
  const vocab = Array.from({ length: 3_000 }, (_, i) => `w${i.toString(36)}`);
  const word = () => vocab[Math.floor(vocab.length * rand() ** 3)]!;
  const frequent = Array.from({ length: 20 }, () => Array.from({ length: 3 }, word));
  return Array.from({ length: n }, (_, i) => {
    const words = rand() < 0.2 ? frequent[Math.floor(rand() * frequent.length)]! : Array.from({ length: 3 + Math.floor(rand() * 8) }, word);
    const lexemes = [...new Set(words)].sort();
    return {
      conversation_id: `c${i}`,
      question: `${words.join(' ')}?`,
      reason: 'declined',
      lexemes,
      reply: null,
      at: new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString(),
    };
  });
}

for (const n of values.sizes.split(',').map(Number)) {
  const rows = plant(n);
  const times: number[] = [];
  let groups = 0;
  const stats = { compared: -1 };
  for (let r = 0; r < Number(values.runs); r++) {
    const t = performance.now();
    groups = groupGapQuestions(rows, { stats }).length;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${n} questions: median ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times.at(-1)!.toFixed(1)}), ${groups} groups, ${stats.compared < 0 ? 'comparisons not counted' : `${stats.compared} comparisons`}`,
  );
}

async function plantedInDb() {
  delete process.env.DATABASE_URL;
  process.env.DATA_DIR = (await import('../helpers/data-dir')).newDataDir('svc-gaps-bench-');
  const { sql } = await import('drizzle-orm');
  const { closeDatabase, getDb } = await import('../../db/client');
  const { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } = await import('../helpers/builders');
  for (const n of values.sizes.split(',').map(Number)) {
    const acct = await createTestAccount(`Gaps ${n}`);
    const [ch] = (await newChannelIds(1)) as [number];
    const lines: object[] = [];
    for (const r of plant(n)) {
      const at = r.at.replace('T', ' ').slice(0, 19);
      const conv = conversationLine({ channel_id: ch, created_at: at, updated_at: at });
      lines.push(conv, responseLine(conv, { question: r.question, created_at: at }));
    }
    await importLines(acct.accountId, lines);
    await (await getDb()).execute(sql`UPDATE responses SET declined = true WHERE account_id = ${acct.accountId}`);
    const times: number[] = [];
    let read = 0;
    for (let r = 0; r < Number(values.runs); r++) {
      const t = performance.now();
      read = (await readContentGaps(acct.accountId, { from: '2026-03-01', to: '2026-03-01' })).read;
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(
      `PGlite, ${n} declined questions planted, ${read} read: read + group median ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times.at(-1)!.toFixed(1)})`,
    );
  }
  await closeDatabase();
}

if (values.db) void plantedInDb();
