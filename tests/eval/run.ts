/**
 * The answer evaluation (`npm run eval:answers`): loads the fixed knowledge base of
 * tests/eval/kb (Markdown, HTML, PDF, DOCX) into a fresh account and asks every question of
 * tests/eval/questions.ts through the built-in engine. Prints recall@1 and recall@3 of the
 * retrieval ranking, the share of unanswerable questions declined (off-topic and near-domain
 * apart), and the share of answerable questions wrongly declined; then the harder sets: the
 * false-answer rate on everyday out-of-scope requests and the figures of the typo/informal
 * paraphrases; exits 1 when a goal is missed.
 *
 * Database: DATABASE_URL (PostgreSQL; a fresh account in it) or, unset, a temporary PGlite
 * directory. `--verbose` lists every miss.
 */
import { CLI } from '../../lib/audit/contract';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CURATED_CASES, FOLLOW_UPS, OUT_OF_SCOPE, PARAPHRASES, QUESTIONS, SYNONYM_CASES, UNRELATED_NEXT, type EvalQuestion } from './questions';
import { evalDocuments } from './documents';
import { isRelevant, type RankedPassage } from '../../lib/knowledge/ranking';

/** The figures of one part of the set (original, held-out, or all questions). */
export type EvalFigures = {
  answerable: number;
  unanswerable: number;
  recallAt1: number;
  recallAt3: number;
  offTopicDeclined: number;
  nearDomainDeclined: number;
  unanswerableDeclined: number;
  wronglyDeclined: number;
  answeredRight: number;
  /** Off-topic questions answered (the goal is none). */
  offTopicAnswered: number;
};

type Asked = {
  kind: EvalQuestion['kind'] | 'out-of-scope';
  heldOut: boolean;
  q: string;
  hit1: boolean;
  hit3: boolean;
  declined: boolean;
  usedRight: boolean;
  miss?: string;
  /** The best passage and whether it is from the right document, for the floor sweep. */
  top: RankedPassage | undefined;
  rightDocument: boolean;
};

/** Follow-ups (questions.ts FOLLOW_UPS) asked after their first question in one conversation. */
export type FollowUpFigures = {
  asked: number;
  right: number;
  declined: number;
  repeatedWrongly: number;
  /** questions.ts UNRELATED_NEXT: answered as if asked alone (declined, or from their own document). */
  unrelated: { asked: number; apart: number; declined: number; carried: number };
  misses: string[];
};

/** Synonym and curated-answer cases (questions.ts), each asked before and after the account adds them. */
export type AddedFigures = {
  /** suggested: the gaps' synonym suggestion for the declined question is the case's group. */
  synonyms: { asked: number; answeredBefore: number; suggested: number; answeredAfter: number };
  curated: { asked: number; curatedBefore: number; curatedAfter: number; othersCurated: number };
  misses: string[];
};

/** The harder sets (questions.ts OUT_OF_SCOPE, PARAPHRASES), asked only when requested; null otherwise. */
export type HarderFigures = {
  outOfScope: { asked: number; answered: number; falseAnswerRate: number };
  paraphrases: EvalFigures;
  misses: string[];
};

export type EvalResult = EvalFigures & {
  harder: HarderFigures | null;
  added: AddedFigures;
  database: string;
  engine: string;
  followUps: FollowUpFigures;
  documents: number;
  passages: number;
  msPerQuestion: number;
  original: EvalFigures;
  heldOut: EvalFigures;
  misses: string[];
  asked: Asked[];
};

export const GOALS = { recallAt1: 0.9, offTopicDeclined: 1, wronglyDeclined: 0.1, outOfScopeFalseAnswers: 0.03 };

function figures(asked: Asked[]): EvalFigures {
  const ans = asked.filter((x) => x.kind === 'answerable');
  const off = asked.filter((x) => x.kind === 'off-topic');
  const near = asked.filter((x) => x.kind === 'near-domain');
  const share = (xs: Asked[], f: (x: Asked) => boolean) => (xs.length ? xs.filter(f).length / xs.length : 1);
  return {
    answerable: ans.length,
    unanswerable: off.length + near.length,
    recallAt1: share(ans, (x) => x.hit1),
    recallAt3: share(ans, (x) => x.hit3),
    offTopicDeclined: share(off, (x) => x.declined),
    nearDomainDeclined: share(near, (x) => x.declined),
    unanswerableDeclined: share([...off, ...near], (x) => x.declined),
    wronglyDeclined: ans.length ? ans.filter((x) => x.declined).length / ans.length : 0,
    answeredRight: share(ans, (x) => x.usedRight),
    offTopicAnswered: off.filter((x) => !x.declined).length,
  };
}

/** The account's own endpoint to evaluate with (the local fake of tests/fixtures/fake-model.ts, or a real one); none: the built-in engine. */
export type EvalModel = { name: string; baseUrl: string; apiKey: string; embeddingModel: string } | null;

/** Runs the evaluation against the database this process is configured for (caller sets it up). */
export async function evaluateAnswers(model: EvalModel = null, options: { harder?: boolean } = {}): Promise<EvalResult> {
  const { createAccount } = await import('../../lib/accounts/service');
  const { addKnowledgeDocument } = await import('../../lib/knowledge/service');
  const { answerEngine } = await import('../../lib/answers/engines');
  const { rankForQuestion } = await import('../../lib/answers/engine');
  const { saveModelEndpoint } = await import('../../lib/answers/model-endpoint');
  const { embedPendingPassages } = await import('../../lib/answers/embeddings');
  const { effectiveBotSettings } = await import('../../lib/bot/settings');
  const { getDatabase } = await import('../../db/client');
  const database = (await getDatabase()).kind;

  const account = await createAccount({
    name: 'Answer evaluation',
    adminEmail: `eval-${Date.now()}-${process.pid}@example.test`,
    adminPassword: 'evaluation password',
  });
  const accountId = account.account_id;
  const fileOf = new Map<string, string>();
  let passages = 0;
  const docs = evalDocuments();
  for (const d of docs) {
    const added = await addKnowledgeDocument(accountId, d.filename, d.data);
    fileOf.set(added.document_id, d.filename);
    passages += added.chunks;
  }

  if (model) {
    await saveModelEndpoint(CLI, accountId, { baseUrl: model.baseUrl, apiKey: model.apiKey, clearKey: false, embeddingModel: model.embeddingModel });
    await embedPendingPassages(accountId);
  }
  const { endpoint } = await effectiveBotSettings(accountId);
  const engine = answerEngine();
  const askOne = async (item: EvalQuestion | { q: string; kind: 'out-of-scope'; heldOut?: undefined }, tag: string): Promise<Asked> => {
    const input = { accountId, conversationId: '00000000-0000-0000-0000-000000000000', question: item.q, signal: AbortSignal.timeout(30_000) };
    const ranked = await rankForQuestion(input, [], 3, endpoint);
    const top = ranked[0];
    const answer = await engine.answer(input);
    for await (const _d of answer.deltas) {
      /* drain */
    }
    const declined = answer.declined;
    const x: Asked = {
      kind: item.kind,
      heldOut: !!item.heldOut,
      q: item.q,
      hit1: false,
      hit3: false,
      declined,
      usedRight: false,
      top,
      rightDocument: item.kind === 'answerable' && !!top && fileOf.get(top.document_id) === item.doc,
    };
    if (item.kind === 'answerable') {
      const docsRanked = ranked.map((p) => fileOf.get(p.document_id));
      x.hit1 = docsRanked[0] === item.doc;
      x.hit3 = docsRanked.includes(item.doc);
      x.usedRight = !declined && fileOf.get(answer.sources[0]!.document_id) === item.doc;
      if (!x.hit1 || declined || !x.usedRight) {
        x.miss = `answerable  ${declined ? 'DECLINED' : `answered from ${fileOf.get(answer.sources[0]!.document_id)}`}; ranked [${docsRanked.join(', ')}]; want ${item.doc}${tag}: ${item.q}`;
      }
    } else if (!declined) {
      x.miss = `${item.kind.padEnd(11)} ANSWERED from ${answer.sources.map((s) => fileOf.get(s.document_id)).join(', ')}${tag}: ${item.q}`;
    }
    return x;
  };
  const asked: Asked[] = [];
  const started = Date.now();
  for (const item of QUESTIONS) asked.push(await askOne(item, item.heldOut ? ' [held-out]' : ''));
  const msPerQuestion = (Date.now() - started) / QUESTIONS.length;
  let harder: HarderFigures | null = null;
  if (options.harder) {
    const outOfScope: Asked[] = [];
    for (const q of OUT_OF_SCOPE) outOfScope.push(await askOne({ q, kind: 'out-of-scope' }, ''));
    const paraphrases: Asked[] = [];
    for (const item of PARAPHRASES) paraphrases.push(await askOne(item, ' [paraphrase]'));
    const answered = outOfScope.filter((x) => !x.declined).length;
    harder = {
      outOfScope: { asked: outOfScope.length, answered, falseAnswerRate: answered / outOfScope.length },
      paraphrases: figures(paraphrases),
      misses: [...outOfScope, ...paraphrases].flatMap((x) => (x.miss ? [x.miss] : [])),
    };
  }
  const followUps = await askFollowUps(accountId, fileOf);
  const added = await askAdded(accountId, fileOf);
  return {
    added,
    harder,
    database,
    engine: model ? `own endpoint (${model.name}, ${model.embeddingModel ? `embeddings ${model.embeddingModel}` : 'no embeddings'})` : 'built-in',
    followUps,
    documents: docs.length,
    passages,
    msPerQuestion,
    ...figures(asked),
    original: figures(asked.filter((x) => !x.heldOut)),
    heldOut: figures(asked.filter((x) => x.heldOut)),
    misses: asked.flatMap((x) => (x.miss ? [x.miss] : [])),
    asked,
  };
}

/** Each follow-up asked in a conversation whose first turn is the engine's answer to the first question. */
async function askFollowUps(accountId: number, fileOf: Map<string, string>): Promise<FollowUpFigures> {
  const { randomUUID } = await import('node:crypto');
  const { answerEngine } = await import('../../lib/answers/engines');
  const { importNdjson } = await import('../../lib/imports/service');
  const engine = answerEngine();
  const ask = async (conversationId: string, question: string) => {
    const answer = await engine.answer({ accountId, conversationId, question, signal: AbortSignal.timeout(30_000) });
    let text = '';
    for await (const d of answer.deltas) text += d;
    return { ...answer, text };
  };
  const out: FollowUpFigures = { asked: 0, right: 0, declined: 0, repeatedWrongly: 0, unrelated: { asked: 0, apart: 0, declined: 0, carried: 0 }, misses: [] };
  let channel = 900_000_000 + (process.pid % 1000) * 1000;
  /** A conversation whose first turn is the engine's answer to `question` (stored as an import would). */
  const startConversation = async (question: string) => {
    const conversationId = randomUUID();
    const first = await ask(conversationId, question);
    const channelId = channel++;
    const at = '2026-01-01 10:00:00';
    await importNdjson(accountId, {
      lines: [
        {
          type: 'conversation',
          conversation_id: conversationId,
          title: question,
          status: 'Open',
          channel_id: channelId,
          channel_name: 'Evaluation',
          created_at: at,
          updated_at: at,
        },
        {
          type: 'response',
          response_id: randomUUID(),
          conversation_id: conversationId,
          question,
          answer: first.text,
          channel_id: channelId,
          created_at: at,
          likes: 0,
          dislikes: 0,
          comments: 0,
        },
      ].map((l) => JSON.stringify(l)),
    });
    return { conversationId, first };
  };
  for (const item of FOLLOW_UPS) {
    const { conversationId, first } = await startConversation(item.first);
    const then = await ask(conversationId, item.then);
    const used = then.sources[0];
    const right = !then.declined && !!used && fileOf.get(used.document_id) === item.doc && used.passage.includes(item.passage);
    const repeated = !then.declined && !!used && !!first.sources[0] && used.passage === first.sources[0].passage;
    out.asked++;
    if (right) out.right++;
    if (then.declined) out.declined++;
    if (repeated && !item.same) out.repeatedWrongly++;
    if (!right) {
      out.misses.push(
        `follow-up  ${then.declined ? 'DECLINED' : `answered from ${fileOf.get(used!.document_id)} "${used!.passage.slice(0, 60).replace(/\n/g, ' ')}…"${repeated ? " (the first answer's passage again)" : ''}`}; want "${item.passage}": ${item.first} → ${item.then}`,
      );
    }
  }
  for (const item of UNRELATED_NEXT) {
    const { conversationId, first } = await startConversation(item.first);
    const then = await ask(conversationId, item.then);
    const doc = then.declined ? null : fileOf.get(then.sources[0]!.document_id);
    const firstDoc = first.declined ? null : fileOf.get(first.sources[0]!.document_id);
    const apart = item.doc === null ? then.declined : doc === item.doc;
    out.unrelated.asked++;
    if (apart) out.unrelated.apart++;
    if (then.declined) out.unrelated.declined++;
    if (!then.declined && doc === firstDoc) out.unrelated.carried++;
    if (!apart) {
      out.misses.push(
        `unrelated  ${then.declined ? 'DECLINED' : `answered from ${doc} "${then.sources[0]!.passage.slice(0, 60).replace(/\n/g, ' ')}…"`}; want ${item.doc ?? 'a decline'}: ${item.first} → ${item.then}`,
      );
    }
  }
  return out;
}

/** Each synonym and curated case asked before and after the account adds its group or entry (after the main set: its figures are unaffected). */
async function askAdded(accountId: number, fileOf: Map<string, string>): Promise<AddedFigures> {
  const { answerEngine } = await import('../../lib/answers/engines');
  const { addSynonymGroup } = await import('../../lib/knowledge/synonyms');
  const { addCuratedAnswer } = await import('../../lib/knowledge/curated');
  const engine = answerEngine();
  const ask = async (question: string) => {
    const answer = await engine.answer({ accountId, conversationId: '00000000-0000-0000-0000-000000000000', question, signal: AbortSignal.timeout(30_000) });
    let text = '';
    for await (const d of answer.deltas) text += d;
    return { declined: answer.declined, text, doc: answer.sources[0] && fileOf.get(answer.sources[0].document_id) };
  };
  const out: AddedFigures = {
    synonyms: { asked: SYNONYM_CASES.length, answeredBefore: 0, suggested: 0, answeredAfter: 0 },
    curated: { asked: 0, curatedBefore: 0, curatedAfter: 0, othersCurated: 0 },
    misses: [],
  };
  const answeredFrom = (a: Awaited<ReturnType<typeof ask>>, doc: string) => !a.declined && a.doc === doc;
  for (const c of SYNONYM_CASES) if (answeredFrom(await ask(c.q), c.doc)) out.synonyms.answeredBefore++;
  // What /insights/gaps would suggest for each declined question (each a gap group of its own).
  const { groupGapQuestions } = await import('../../lib/insights/gaps');
  const { suggestGapSynonyms } = await import('../../lib/insights/synonym-suggestions');
  const { textLexemes } = await import('../../db/queries/knowledge');
  const { getDb } = await import('../../db/client');
  for (const c of SYNONYM_CASES) {
    const lexemes = (await textLexemes(await getDb(), c.q)).map((l) => l.lexeme);
    const groups = groupGapQuestions([{ conversation_id: c.q, question: c.q, reason: 'declined', lexemes, reply: null, at: '' }]);
    const offered = (await suggestGapSynonyms(accountId, groups))[0]!.map((s) => [s.word, s.synonym].sort().join(', '));
    const want = c.group.split(', ').sort().join(', ');
    if (offered.includes(want)) out.synonyms.suggested++;
    else out.misses.push(`suggestion ${offered.length ? offered.join('; ') : 'none'}; want ${c.group}: ${c.q}`);
  }
  for (const c of SYNONYM_CASES) await addSynonymGroup(accountId, c.group);
  for (const c of SYNONYM_CASES) {
    const a = await ask(c.q);
    if (answeredFrom(a, c.doc)) out.synonyms.answeredAfter++;
    else out.misses.push(`synonym    ${a.declined ? 'DECLINED' : `answered from ${a.doc}`}; want ${c.doc} (group ${c.group}): ${c.q}`);
  }
  const paraphrases = CURATED_CASES.flatMap((c) => c.paraphrases.map((q) => ({ q, answer: c.answer })));
  out.curated.asked = paraphrases.length;
  for (const p of paraphrases) if ((await ask(p.q)).text.includes(p.answer)) out.curated.curatedBefore++;
  for (const c of CURATED_CASES) await addCuratedAnswer(accountId, { questions: c.questions, answer: c.answer });
  for (const p of paraphrases) {
    const a = await ask(p.q);
    if (a.text.includes(p.answer)) out.curated.curatedAfter++;
    else out.misses.push(`curated    ${a.declined ? 'DECLINED' : 'another answer'}; want the curated answer: ${p.q}`);
  }
  for (const c of CURATED_CASES)
    for (const q of c.other) {
      const a = await ask(q);
      if (CURATED_CASES.some((k) => a.text.includes(k.answer))) {
        out.curated.othersCurated++;
        out.misses.push(`curated    a curated answer for another question: ${q}`);
      }
    }
  return out;
}

export function addedGoalsMet(r: AddedFigures): boolean {
  return r.synonyms.answeredAfter === r.synonyms.asked && r.curated.curatedAfter === r.curated.asked && r.curated.othersCurated === 0;
}

/** The harder sets: at most 3 % of out-of-scope requests answered; the paraphrases held to the answerable goals. */
export function harderGoalsMet(h: HarderFigures): boolean {
  return (
    h.outOfScope.falseAnswerRate <= GOALS.outOfScopeFalseAnswers &&
    h.paraphrases.recallAt1 >= GOALS.recallAt1 &&
    h.paraphrases.wronglyDeclined <= GOALS.wronglyDeclined
  );
}

export function goalsMet(r: EvalFigures): boolean {
  return r.recallAt1 >= GOALS.recallAt1 && r.offTopicDeclined >= GOALS.offTopicDeclined && r.wronglyDeclined <= GOALS.wronglyDeclined;
}

/** What each floor would give (the built-in engine declines when the best passage is not relevant at it). */
export function floorSweep(r: EvalResult, part: 'all' | 'original' | 'held-out' = 'all'): string {
  const lines = [
    '| floor | off-topic declined | near-domain declined | answerable wrongly declined | answered from the right document |',
    '|---|---|---|---|---|',
  ];
  const pool = r.asked.filter((x) => part === 'all' || x.heldOut === (part === 'held-out'));
  const share = (kind: string, f: (x: Asked) => boolean) => {
    const all = pool.filter((x) => x.kind === kind);
    return all.filter(f).length / all.length;
  };
  for (let floor = 0.2; floor <= 0.801; floor += 0.05) {
    const ok = (x: Asked) => !!x.top && isRelevant(x.top, floor);
    lines.push(
      `| ${floor.toFixed(2)} | ${pct(share('off-topic', (x) => !ok(x)))} | ${pct(share('near-domain', (x) => !ok(x)))} | ` +
        `${pct(share('answerable', (x) => !ok(x)))} | ${pct(share('answerable', (x) => ok(x) && x.rightDocument))} |`,
    );
  }
  return lines.join('\n');
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function formatResult(r: EvalResult): string {
  const row = (name: string, f: EvalFigures) =>
    `| ${r.database} | ${name} | ${r.documents} / ${r.passages} | ${f.answerable} + ${f.unanswerable} | ${pct(f.recallAt1)} | ${pct(f.recallAt3)} | ${pct(f.answeredRight)} | ` +
    `${pct(f.unanswerableDeclined)} (${pct(f.offTopicDeclined)} / ${pct(f.nearDomainDeclined)}) | ${pct(f.wronglyDeclined)} |`;
  return [
    `| database | questions | documents / passages | answerable + unanswerable | recall@1 | recall@3 | answered from the right document | unanswerable declined (off-topic / near-domain) | answerable wrongly declined |`,
    '|---|---|---|---|---|---|---|---|---|',
    row('original', r.original),
    row('held-out', r.heldOut),
    row('all', r),
    `(${r.msPerQuestion.toFixed(1)} ms per question; engine: ${r.engine})`,
    '',
    `Follow-ups: ${r.followUps.right} of ${r.followUps.asked} answered from the right passage; ${r.followUps.declined} declined; ` +
      `${r.followUps.repeatedWrongly} repeated the first answer's passage where another one answers.`,
    `Unrelated next questions: ${r.followUps.unrelated.apart} of ${r.followUps.unrelated.asked} answered as if asked alone; ` +
      `${r.followUps.unrelated.declined} declined; ${r.followUps.unrelated.carried} answered from the first question's document.`,
    `Synonyms: ${r.added.synonyms.answeredBefore} of ${r.added.synonyms.asked} answered from the right document before the account's groups, ` +
      `${r.added.synonyms.suggested} suggested from the gaps, ${r.added.synonyms.answeredAfter} answered after. Curated answers: ${r.added.curated.curatedBefore} of ${r.added.curated.asked} paraphrases got the curated answer before it was added, ` +
      `${r.added.curated.curatedAfter} after; ${r.added.curated.othersCurated} other questions got one.`,
    ...(r.harder
      ? [
          `Out-of-scope (${r.harder.outOfScope.asked} everyday requests no support knowledge base answers): ${r.harder.outOfScope.answered} answered, ` +
            `false-answer rate ${pct(r.harder.outOfScope.falseAnswerRate)} (goal ≤ ${pct(GOALS.outOfScopeFalseAnswers)}).`,
          `Paraphrases (${r.harder.paraphrases.answerable} answerable questions with typos and informal wording): recall@1 ${pct(r.harder.paraphrases.recallAt1)}, ` +
            `recall@3 ${pct(r.harder.paraphrases.recallAt3)}, answered from the right document ${pct(r.harder.paraphrases.answeredRight)}, ` +
            `wrongly declined ${pct(r.harder.paraphrases.wronglyDeclined)}.`,
        ]
      : []),
  ].join('\n');
}

async function main() {
  const verbose = process.argv.includes('--verbose');
  // --model fake (tests/fixtures/fake-model.ts) or --model <base URL> (key: EVAL_MODEL_API_KEY);
  // --embeddings [name]: with embeddings (the fake's, or the named model of a real endpoint).
  const argAfter = (flag: string) => {
    const i = process.argv.indexOf(flag);
    return i < 0 ? undefined : process.argv[i + 1]?.startsWith('--') ? '' : (process.argv[i + 1] ?? '');
  };
  const target = argAfter('--model');
  const fake = target === 'fake' ? await (await import('../fixtures/fake-model')).startFakeModel() : null;
  if (fake) process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS = '1';
  const embeddings = argAfter('--embeddings');
  const model: EvalModel =
    target === undefined
      ? null
      : {
          name: fake ? 'fake' : target,
          baseUrl: fake ? fake.url : target,
          apiKey: process.env.EVAL_MODEL_API_KEY ?? '',
          embeddingModel: embeddings === undefined ? '' : embeddings || 'fake-embed',
        };
  let dataDir: string | undefined;
  if (!process.env.DATABASE_URL) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-eval-'));
    process.env.DATA_DIR = dataDir;
  }
  process.env.SVC_DEMO = '0';
  const { closeDatabase } = await import('../../db/client');
  try {
    const r = await evaluateAnswers(model, { harder: !process.argv.includes('--no-harder') });
    console.log(formatResult(r));
    const harderMet = !r.harder || harderGoalsMet(r.harder);
    if (verbose || !goalsMet(r) || !harderMet)
      for (const m of [...r.misses, ...r.followUps.misses, ...r.added.misses, ...(r.harder?.misses ?? [])]) console.log(`  ${m}`);
    if (process.argv.includes('--sweep')) {
      for (const part of ['original', 'held-out', 'all'] as const) console.log(`\n${part}:\n${floorSweep(r, part)}`);
    }
    const parts = [
      ['original', r.original],
      ['held-out', r.heldOut],
      ['all', r],
    ] as const;
    for (const [name, f] of parts) console.log(`${name}: ${goalsMet(f) ? 'goals met' : 'goals NOT met'}`);
    console.log(
      goalsMet(r)
        ? 'Goals met.'
        : `Goals NOT met (recall@1 ≥ ${pct(GOALS.recallAt1)}, every off-topic question declined, wrong declines ≤ ${pct(GOALS.wronglyDeclined)}).`,
    );
    if (!addedGoalsMet(r.added)) console.log('Synonym or curated cases NOT met (every case answered after, no other question curated).');
    const apart = r.followUps.unrelated.apart === r.followUps.unrelated.asked;
    if (!apart) console.log('Unrelated next questions NOT met (each answered as if asked alone).');
    if (r.harder)
      console.log(
        harderMet
          ? 'Harder sets: goals met.'
          : `Harder sets: goals NOT met (out-of-scope false answers ≤ ${pct(GOALS.outOfScopeFalseAnswers)}; paraphrases: recall@1 ≥ ${pct(GOALS.recallAt1)}, wrong declines ≤ ${pct(GOALS.wronglyDeclined)}).`,
      );
    process.exitCode = goalsMet(r) && addedGoalsMet(r.added) && apart && harderMet ? 0 : 1;
  } finally {
    await fake?.close();
    await closeDatabase();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) void main();
