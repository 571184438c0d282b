/**
 * The answer evaluation (`npm run eval:answers`): loads the fixed knowledge base of
 * tests/eval/kb (Markdown, HTML, PDF, DOCX) into a fresh account and asks every question of
 * tests/eval/questions.ts through the built-in engine. Prints recall@1 and recall@3 of the
 * retrieval ranking, the share of unanswerable questions declined (off-topic and near-domain
 * apart), and the share of answerable questions wrongly declined; exits 1 when a goal is missed.
 *
 * Database: DATABASE_URL (PostgreSQL; a fresh account in it) or, unset, a temporary PGlite
 * directory. `--verbose` lists every miss.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QUESTIONS } from './questions';
import { evalDocuments } from './documents';
import { isRelevant, type RankedPassage } from '../../lib/knowledge/ranking';

export type EvalResult = {
  database: string; documents: number; passages: number; answerable: number; unanswerable: number;
  recallAt1: number; recallAt3: number; offTopicDeclined: number; nearDomainDeclined: number;
  unanswerableDeclined: number; wronglyDeclined: number; answeredRight: number; msPerQuestion: number;
  misses: string[];
  /** The best passage's relevance per question, for tuning the floor (`--sweep`). */
  bestRelevance: Array<{ kind: string; top: RankedPassage | undefined; rightDocument: boolean }>;
};

export const GOALS = { recallAt1: 0.9, offTopicDeclined: 1, wronglyDeclined: 0.1 };

/** Runs the evaluation against the database this process is configured for (caller sets it up). */
export async function evaluateAnswers(): Promise<EvalResult> {
  const { createAccount } = await import('../../lib/accounts/service');
  const { addKnowledgeDocument, findPassages } = await import('../../lib/knowledge/service');
  const { answerEngine } = await import('../../lib/chat/engine');
  const { getDatabase } = await import('../../db/client');
  const database = (await getDatabase()).kind;

  const account = await createAccount({ name: 'Answer evaluation', adminEmail: `eval-${Date.now()}-${process.pid}@example.test`, adminPassword: 'evaluation password' });
  const accountId = account.account_id;
  const fileOf = new Map<string, string>();
  let passages = 0;
  const docs = evalDocuments();
  for (const d of docs) {
    const added = await addKnowledgeDocument(accountId, d.filename, d.data);
    fileOf.set(added.document_id, d.filename);
    passages += added.chunks;
  }

  const engine = answerEngine();
  const misses: string[] = [];
  let at1 = 0; let at3 = 0; let wrongDeclines = 0; let right = 0;
  const declined = { 'off-topic': [0, 0], 'near-domain': [0, 0] } as Record<string, [number, number]>;
  const started = Date.now();
  const bestRelevance: EvalResult['bestRelevance'] = [];
  for (const item of QUESTIONS) {
    const ranked = await findPassages(accountId, null, item.q, 3);
    const top = ranked[0];
    bestRelevance.push({ kind: item.kind, top, rightDocument: item.kind === 'answerable' && !!top && fileOf.get(top.document_id) === item.doc });
    const answer = await engine.answer({ accountId, conversationId: '00000000-0000-0000-0000-000000000000', question: item.q, signal: AbortSignal.timeout(30_000) });
    let text = '';
    for await (const d of answer.deltas) text += d;
    const isDeclined = answer.sources.length === 0;
    if (item.kind === 'answerable') {
      const docsRanked = ranked.map((p) => fileOf.get(p.document_id));
      const hit1 = docsRanked[0] === item.doc;
      const hit3 = docsRanked.includes(item.doc);
      at1 += hit1 ? 1 : 0;
      at3 += hit3 ? 1 : 0;
      if (isDeclined) wrongDeclines++;
      const usedRight = !isDeclined && fileOf.get(answer.sources[0]!.document_id) === item.doc;
      if (usedRight) right++;
      if (!hit1 || isDeclined || !usedRight) {
        misses.push(`answerable  ${isDeclined ? 'DECLINED' : `answered from ${fileOf.get(answer.sources[0]!.document_id)}`}; ranked [${docsRanked.join(', ')}]; want ${item.doc}: ${item.q}`);
      }
    } else {
      const slot = declined[item.kind]!;
      slot[1]++;
      if (isDeclined) slot[0]++;
      else misses.push(`${item.kind.padEnd(11)} ANSWERED from ${answer.sources.map((s) => fileOf.get(s.document_id)).join(', ')}: ${item.q}`);
    }
  }
  const answerable = QUESTIONS.filter((q) => q.kind === 'answerable').length;
  const [offD, offN] = declined['off-topic']!;
  const [nearD, nearN] = declined['near-domain']!;
  return {
    database, documents: docs.length, passages, answerable, unanswerable: offN + nearN,
    recallAt1: at1 / answerable, recallAt3: at3 / answerable,
    offTopicDeclined: offD / offN, nearDomainDeclined: nearD / nearN, unanswerableDeclined: (offD + nearD) / (offN + nearN),
    wronglyDeclined: wrongDeclines / answerable, answeredRight: right / answerable,
    msPerQuestion: (Date.now() - started) / QUESTIONS.length, misses, bestRelevance,
  };
}

export function goalsMet(r: EvalResult): boolean {
  return r.recallAt1 >= GOALS.recallAt1 && r.offTopicDeclined >= GOALS.offTopicDeclined && r.wronglyDeclined <= GOALS.wronglyDeclined;
}

/** What each floor would give (the built-in engine declines when the best passage is not relevant at it). */
export function floorSweep(r: EvalResult): string {
  const lines = ['| floor | off-topic declined | near-domain declined | answerable wrongly declined | answered from the right document |', '|---|---|---|---|---|'];
  const share = (kind: string, f: (x: EvalResult['bestRelevance'][number]) => boolean) => {
    const all = r.bestRelevance.filter((x) => x.kind === kind);
    return all.filter(f).length / all.length;
  };
  for (let floor = 0.2; floor <= 0.801; floor += 0.05) {
    const ok = (x: EvalResult['bestRelevance'][number]) => !!x.top && isRelevant(x.top, floor);
    lines.push(`| ${floor.toFixed(2)} | ${pct(share('off-topic', (x) => !ok(x)))} | ${pct(share('near-domain', (x) => !ok(x)))} | ` +
      `${pct(share('answerable', (x) => !ok(x)))} | ${pct(share('answerable', (x) => ok(x) && x.rightDocument))} |`);
  }
  return lines.join('\n');
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function formatResult(r: EvalResult): string {
  return [
    `| database | documents / passages | questions (answerable + unanswerable) | recall@1 | recall@3 | answered from the right document | unanswerable declined (off-topic / near-domain) | answerable wrongly declined | ms per question |`,
    '|---|---|---|---|---|---|---|---|---|',
    `| ${r.database} | ${r.documents} / ${r.passages} | ${r.answerable} + ${r.unanswerable} | ${pct(r.recallAt1)} | ${pct(r.recallAt3)} | ${pct(r.answeredRight)} | ${pct(r.unanswerableDeclined)} (${pct(r.offTopicDeclined)} / ${pct(r.nearDomainDeclined)}) | ${pct(r.wronglyDeclined)} | ${r.msPerQuestion.toFixed(1)} |`,
  ].join('\n');
}

async function main() {
  const verbose = process.argv.includes('--verbose');
  let dataDir: string | undefined;
  if (!process.env.DATABASE_URL) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-eval-'));
    process.env.DATA_DIR = dataDir;
  }
  process.env.SVC_DEMO = '0';
  const { closeDatabase } = await import('../../db/client');
  try {
    const r = await evaluateAnswers();
    console.log(formatResult(r));
    if (verbose || !goalsMet(r)) for (const m of r.misses) console.log(`  ${m}`);
    if (process.argv.includes('--sweep')) console.log(`\n${floorSweep(r)}`);
    console.log(goalsMet(r)
      ? 'Goals met.'
      : `Goals NOT met (recall@1 ≥ ${pct(GOALS.recallAt1)}, every off-topic question declined, wrong declines ≤ ${pct(GOALS.wronglyDeclined)}).`);
    process.exitCode = goalsMet(r) ? 0 : 1;
  } finally {
    await closeDatabase();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) void main();
