import { getDb } from '../../db/client';
import {
  claimAnswerTestRun,
  countAnswerTestCases,
  deleteAnswerTestCase,
  documentLineages,
  finishAnswerTestRun,
  getAnswerTestState,
  insertAnswerTestCases,
  listAnswerTestCases,
  listAnswerTestSources,
  listNewlyFailingAnswerTests,
  recordAnswerTestResults,
  renewAnswerTestLease,
  type AnswerTestCaseRow,
  type AnswerTestResult,
  type NewAnswerTestCase,
} from '../../db/queries/answer-tests';
import { listCuratedAnswers } from '../../db/queries/curated';
import { EngineError } from '../answers/engine';
import { answerEngine } from '../answers/engines';
import { requireAccount } from '../accounts/service';
import { requireRole, type Role } from '../auth/roles';
import { AppError } from '../core/errors';
import { isUuid } from '../core/validation';
import { getEnv } from '../env';
import { ANSWER_TEST_LIMITS, AnswerTestInput, type AnswerTestRun } from './contract';
import { answerTestsCsv, parseAnswerTestsCsv } from './csv';
import { withRunSlot } from './slots';

/** Who acts: a member of the account (the page's server actions), or the CLI (as the owner). */
export type AnswerTestActor = { accountId: number; role: Role };

/** A curated answer's name where a source is shown or written: the prefix tells it from a document titled the same. */
const CURATED_PREFIX = 'Curated answer: ';
const NIL_CONVERSATION = '00000000-0000-0000-0000-000000000000';
/** A run's lease; renewed while it runs, so a run on an instance that died is taken over this long after. */
const LEASE_SECONDS = 120;
const RENEW_MS = 30_000;
const CASE_TIMEOUT_MS = 60_000;
const ANSWER_WORDS = 25;

type Source = { kind: 'document' | 'curated'; id: string; label: string; filename: string | null };

/** The documents and curated answers a case can expect its answer from (the page's select "Source"). */
export async function answerTestSources(actor: AnswerTestActor): Promise<Source[]> {
  requireRole(actor, 'bot.manage');
  return listAnswerTestSources(await getDb(), actor.accountId);
}

/**
 * A case checked and resolved for storage. An `answers from` case names its source by the select's
 * `kind:id`, or (CSV) by a document's title or file name, or by `Curated answer: <first question>`.
 */
function checkedCase(input: AnswerTestInput, sources: Source[], where = ''): NewAnswerTestCase {
  const parsed = AnswerTestInput.safeParse(input);
  if (!parsed.success) throw new AppError('invalid_request', `${where}${parsed.error.issues.map((i) => i.message).join('; ')}`);
  const { expect, source } = parsed.data;
  const question = parsed.data.question.trim().replace(/\s+/g, ' ');
  const value = parsed.data.value.trim();
  if (!question) throw new AppError('invalid_request', `${where}Question: type the question a visitor would ask.`);
  if (question.length > ANSWER_TEST_LIMITS.questionChars)
    throw new AppError('invalid_request', `${where}Question: at most ${ANSWER_TEST_LIMITS.questionChars} characters.`);
  if (expect === 'declines') return { question, expect, value: '', source_kind: null, source_id: null };
  if (expect === 'mentions') {
    if (!value) throw new AppError('invalid_request', `${where}Text: type the words the answer must contain.`);
    if (value.length > ANSWER_TEST_LIMITS.mentionChars)
      throw new AppError('invalid_request', `${where}Text: at most ${ANSWER_TEST_LIMITS.mentionChars} characters.`);
    return { question, expect, value, source_kind: null, source_id: null };
  }
  const found = source ? sources.find((s) => `${s.kind}:${s.id}` === source) : findSourceNamed(sources, value);
  if (!found)
    throw new AppError(
      'invalid_request',
      source || !value
        ? `${where}Source: choose a document or curated answer of the knowledge base.`
        : `${where}Source: the knowledge base has no document or curated answer named ${JSON.stringify(value)}.`,
    );
  return { question, expect, value: sourceName(found), source_kind: found.kind, source_id: found.id };
}

const sourceName = (s: Pick<Source, 'kind' | 'label'>) => (s.kind === 'curated' ? `${CURATED_PREFIX}${s.label}` : s.label);

function findSourceNamed(sources: Source[], name: string): Source | undefined {
  const n = name.toLowerCase();
  if (n.startsWith(CURATED_PREFIX.toLowerCase())) {
    const q = n.slice(CURATED_PREFIX.length).trim();
    return sources.find((s) => s.kind === 'curated' && s.label.toLowerCase() === q);
  }
  return sources.find((s) => s.kind === 'document' && (s.label.toLowerCase() === n || s.filename?.toLowerCase() === n));
}

async function roomFor(accountId: number, adding: number): Promise<void> {
  const have = await countAnswerTestCases(await getDb(), accountId);
  if (have + adding > ANSWER_TEST_LIMITS.cases)
    throw new AppError('limit_reached', `At most ${ANSWER_TEST_LIMITS.cases} tests per account (this one has ${have}); remove some first.`);
}

export async function addAnswerTest(actor: AnswerTestActor, input: AnswerTestInput) {
  requireRole(actor, 'bot.manage');
  const c = checkedCase(input, await listAnswerTestSources(await getDb(), actor.accountId));
  await roomFor(actor.accountId, 1);
  await insertAnswerTestCases(await getDb(), actor.accountId, [c]);
  return { question: c.question, expect: c.expect, value: c.value };
}

export async function removeAnswerTest(actor: AnswerTestActor, id: string) {
  requireRole(actor, 'bot.manage');
  if (!isUuid(id) || !(await deleteAnswerTestCase(await getDb(), actor.accountId, id))) throw new AppError('not_found', `No answer test ${id}.`);
  return { id, deleted: true };
}

/** A case as the page shows it: its source's name now (or the stored one, marked gone), its last result, and "Newly failing". */
export type AnswerTestView = ReturnType<typeof caseView>;
function caseView(c: AnswerTestCaseRow) {
  const gone = c.expect === 'answers from' && c.source_label === null;
  const value = c.expect === 'answers from' && c.source_label !== null ? sourceName({ kind: c.source_kind!, label: c.source_label }) : c.value;
  return {
    id: c.id,
    question: c.question,
    expect: c.expect,
    value,
    source_gone: gone,
    passed: c.last_passed,
    first_source: c.last_first_source,
    answer: c.last_answer,
    run_at: c.last_run_at,
    newly_failing: c.prev_passed === true && c.last_passed === false,
  };
}

export async function listAnswerTests(actor: AnswerTestActor) {
  requireRole(actor, 'bot.manage');
  const db = await getDb();
  const [cases, state] = await Promise.all([listAnswerTestCases(db, actor.accountId), getAnswerTestState(db, actor.accountId)]);
  return { cases: cases.map(caseView), state, limit: ANSWER_TEST_LIMITS.cases };
}

/** The questions "Newly failing" since the last run (the banner on /knowledge: every member reads it). */
export async function newlyFailingAnswerTests(accountId: number): Promise<string[]> {
  return listNewlyFailingAnswerTests(await getDb(), accountId);
}

/** CSV import (docs/contracts.md §20): every row checked first; any bad row refuses the whole file, naming its line. */
export async function importAnswerTestsCsv(actor: AnswerTestActor, text: string) {
  requireRole(actor, 'bot.manage');
  const db = await getDb();
  const have = await countAnswerTestCases(db, actor.accountId);
  const rows = parseAnswerTestsCsv(text, ANSWER_TEST_LIMITS.cases - have);
  const sources = await listAnswerTestSources(db, actor.accountId);
  const cases = rows.map((r) => checkedCase({ question: r.question, expect: r.expect as 'declines', value: r.value }, sources, `Line ${r.line}: `));
  await roomFor(actor.accountId, cases.length);
  return { imported: await insertAnswerTestCases(db, actor.accountId, cases) };
}

export async function exportAnswerTestsCsv(actor: AnswerTestActor): Promise<string> {
  const { cases } = await listAnswerTests(actor);
  return answerTestsCsv(cases);
}

/** The answer's first words as plain text (Markdown marks dropped). */
export function firstWords(text: string): string {
  const plain = text
    .replace(/\*\*|__|`/g, '')
    .replace(/[>#|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const words = plain.split(' ');
  return words.length > ANSWER_WORDS ? `${words.slice(0, ANSWER_WORDS).join(' ')}…` : plain;
}

const normalised = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();

type Outcome = { declined: boolean; text: string; documentId: string | null; title: string | null; curatedId: string | null; error: string | null };

/** Asks the engine the visitors' widget uses, storing nothing: no conversation, no response, nothing insights count. */
async function ask(accountId: number, question: string): Promise<Outcome> {
  try {
    const a = await answerEngine().answer({ accountId, conversationId: NIL_CONVERSATION, question, signal: AbortSignal.timeout(CASE_TIMEOUT_MS) });
    let text = '';
    for await (const d of a.deltas) text += d;
    const first = a.sources[0];
    return {
      declined: a.declined,
      text,
      documentId: first?.document_id ?? null,
      title: first?.title ?? null,
      curatedId: a.curatedId ?? null,
      error: null,
    };
  } catch (e) {
    if (!(e instanceof EngineError)) throw e;
    return { declined: false, text: '', documentId: null, title: null, curatedId: null, error: e.message };
  }
}

/**
 * Runs every case of the account once (docs/decisions/answer-tests.md): one run per account at a
 * time across instances (a lease in answer_test_state), at most ANSWER_TESTS_CONCURRENCY runs per
 * process, cases one after another with a turn of the event loop between them, so visitors'
 * answers on this instance are never queued behind a run.
 */
export async function runAnswerTests(actor: AnswerTestActor, trigger: RunTrigger = 'manual'): Promise<AnswerTestRun> {
  requireRole(actor, 'bot.manage');
  return withRunSlot(async () => {
    const db = await getDb();
    const claimed = await claimAnswerTestRun(db, actor.accountId, LEASE_SECONDS);
    if (!claimed) throw new AppError('conflict', 'The tests of this account are running already; their results show here when they end.');
    return (await runClaimed(actor.accountId, claimed.kb_version, trigger))!;
  });
}

/** What started a run (the page says so beside the last run). */
export type RunTrigger = 'manual' | 'cli' | 'automatic' | 'demo';

/**
 * A run whose lease is held (by runAnswerTests, or the background loop's claim). `stopping` (the
 * loop's drain) ends it between two cases: nothing is recorded and the lease goes, so the account
 * stays due and another instance runs it.
 */
export async function runClaimed(
  accountId: number,
  kbVersion: number,
  trigger: RunTrigger,
  stopping: () => boolean = () => false,
): Promise<AnswerTestRun | null> {
  const db = await getDb();
  let finished = false;
  try {
    const cases = await listAnswerTestCases(db, accountId);
    const curated = new Map((await listCuratedAnswers(db, accountId)).map((g) => [g.id, g.questions[0] ?? '']));
    const outcomes: Outcome[] = [];
    let renewed = Date.now();
    for (const c of cases) {
      if (stopping()) return null;
      outcomes.push(await ask(accountId, c.question));
      // A turn of the event loop: a visitor's answer waiting on this instance goes first.
      await new Promise((r) => setImmediate(r));
      if (Date.now() - renewed > RENEW_MS) {
        await renewAnswerTestLease(db, accountId, LEASE_SECONDS);
        renewed = Date.now();
      }
    }
    const lineages = await documentLineages(db, accountId, [...new Set(outcomes.flatMap((o) => (o.documentId ? [o.documentId] : [])))]);
    const results: AnswerTestResult[] = [];
    const printed = cases.map((c, i) => {
      const o = outcomes[i]!;
      const firstSource = o.curatedId ? `${CURATED_PREFIX}${curated.get(o.curatedId) ?? ''}` : o.title;
      const passed =
        !o.error &&
        (c.expect === 'declines'
          ? o.declined
          : c.expect === 'mentions'
            ? !o.declined && normalised(o.text).includes(normalised(c.value))
            : !o.declined &&
              (c.source_kind === 'curated' ? o.curatedId === c.source_id : !o.curatedId && !!o.documentId && lineages.get(o.documentId) === c.source_id));
      results.push({ id: c.id, passed, first_source: firstSource, answer: o.error ? `Error: ${o.error}` : firstWords(o.text) });
      return { question: c.question, expect: c.expect, value: caseView(c).value, passed, first_source: firstSource };
    });
    await recordAnswerTestResults(db, accountId, results);
    const passed = results.filter((r) => r.passed).length;
    await finishAnswerTestRun(db, accountId, { kb_version: kbVersion, trigger, passed, failed: results.length - passed });
    finished = true;
    return { passed, failed: results.length - passed, cases: printed };
  } finally {
    if (!finished) await finishAnswerTestRun(db, accountId, null).catch(() => {});
  }
}

/** The CLI's door: `bot test --account ID` runs as the account's owner would (an unknown account is refused). */
export async function runAnswerTestsFromCli(accountId: number): Promise<AnswerTestRun> {
  await requireAccount(await getDb(), accountId);
  return runAnswerTests({ accountId, role: 'owner' }, 'cli');
}

/** How long a change waits before the automatic run (README "Configuration"). */
export function automaticRunTiming() {
  const env = getEnv();
  return { debounceSeconds: env.ANSWER_TESTS_DEBOUNCE_SECONDS, maxWaitSeconds: env.ANSWER_TESTS_MAX_WAIT_SECONDS, leaseSeconds: LEASE_SECONDS };
}
