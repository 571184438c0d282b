/**
 * Answer tests (docs/contracts.md §20) on a real database and one server: each expectation passes
 * and fails as it should, a deleted source makes a case "Newly failing" through the automatic run
 * (and the banner on /knowledge), a burst of edits run once after its pause, a run stopped at shutdown
 * left due and taken over, CSV round trip and refusals, roles and tenancy, and last the CLI's
 * JSON and exit status.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { createAdminUser } from '../../lib/accounts/service';
import { CLI } from '../../lib/audit/contract';
import {
  addAnswerTest,
  answerTestSources,
  exportAnswerTestsCsv,
  importAnswerTestsCsv,
  listAnswerTests,
  newlyFailingAnswerTests,
  removeAnswerTest,
  runAnswerTests,
  runClaimed,
  type AnswerTestActor,
} from '../../lib/answer-tests/service';
import { claimAnswerTestRun } from '../../db/queries/answer-tests';
import { addCuratedAnswer } from '../../lib/knowledge/curated';
import { addKnowledgeDocument, removeKnowledgeDocument } from '../../lib/knowledge/service';
import { refusalOf } from '../helpers/app-error';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { parseSuccess, runCli } from '../helpers/cli';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';

let server: TestServer;
before(
  async () => {
    // Seconds, not a minute: the automatic run follows a change once edits paused 1 s.
    server = await startTestServer({ ANSWER_TESTS_DEBOUNCE_SECONDS: '1', ANSWER_TESTS_MAX_WAIT_SECONDS: '3', ANSWER_TESTS_POLL_SECONDS: '0.3' });
  },
  { timeout: 120_000 },
);
after(async () => server?.close(), { timeout: 30_000 });

const RETURNS = '# Returns policy\n\nYou can return any item within 30 days of delivery for a full refund. Bring the receipt to the store.\n';
const SHIPPING = '# Shipping\n\nWe ship parcels within two business days. Express shipping costs 9 euros and arrives the next day.\n';

/** An account with two documents and a curated answer; its owner as the actor. */
async function shop(): Promise<{ acct: TestAccount; owner: AnswerTestActor; returns: string; shipping: string; curated: string }> {
  const acct = await createTestAccount('Shop');
  const returns = (await addKnowledgeDocument(acct.accountId, 'returns.md', Buffer.from(RETURNS))).document_id;
  const shipping = (await addKnowledgeDocument(acct.accountId, 'shipping.md', Buffer.from(SHIPPING))).document_id;
  const curated = (
    await addCuratedAnswer(acct.accountId, { questions: ['Do you have gift cards?'], answer: 'Yes: gift cards of 10 to 100 euros, in every store.' })
  ).id;
  return { acct, owner: { accountId: acct.accountId, role: 'owner' }, returns, shipping, curated };
}

async function conversationCount(accountId: number): Promise<number> {
  const [row] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM conversations WHERE account_id = ${accountId}`);
  return row!.n;
}

describe('answer tests', () => {
  it('each expectation passes and fails as it should; a run shows the first source and the first words, and stores no conversation', async () => {
    const s = await shop();
    const add = (question: string, expect: 'answers from' | 'declines' | 'mentions', more: { value?: string; source?: string } = {}) =>
      addAnswerTest(s.owner, { question, expect, ...more });
    await add('Can I return an item for a refund?', 'answers from', { source: `document:${s.returns}` });
    await add('How long does shipping take?', 'answers from', { source: `document:${s.returns}` });
    await add('Do you sell gift cards?', 'answers from', { source: `curated:${s.curated}` });
    await add('What is the capital of Mongolia?', 'declines');
    await add('How much is express shipping?', 'declines');
    await add('How much is express shipping?', 'mentions', { value: '9  EUROS' });
    await add('How much is express shipping?', 'mentions', { value: '12 euros' });
    const before = await conversationCount(s.acct.accountId);

    const run = await runAnswerTests(s.owner);
    assert.deepEqual(
      run.cases.map((c) => [c.question, c.expect, c.value, c.passed, c.first_source]),
      [
        ['Can I return an item for a refund?', 'answers from', 'Returns policy', true, 'Returns policy'],
        ['How long does shipping take?', 'answers from', 'Returns policy', false, 'Shipping'],
        ['Do you sell gift cards?', 'answers from', 'Curated answer: Do you have gift cards?', true, 'Curated answer: Do you have gift cards?'],
        ['What is the capital of Mongolia?', 'declines', '', true, null],
        ['How much is express shipping?', 'declines', '', false, 'Shipping'],
        ['How much is express shipping?', 'mentions', '9  EUROS', true, 'Shipping'],
        ['How much is express shipping?', 'mentions', '12 euros', false, 'Shipping'],
      ],
    );
    assert.deepEqual([run.passed, run.failed], [4, 3]);
    const listed = await listAnswerTests(s.owner);
    assert.match(listed.cases[0]!.answer!, /^From Returns policy: Returns policy You can return any item/);
    assert.equal(
      listed.cases.every((c) => !c.newly_failing),
      true,
    );
    assert.deepEqual([listed.state?.last_passed_count, listed.state?.last_failed_count, listed.state?.last_trigger], [4, 3, 'manual']);
    const after = await conversationCount(s.acct.accountId);
    assert.equal(after, before, 'a test run stores no conversation');
  });

  it('refuses bad cases with the field that is wrong', async () => {
    const s = await shop();
    const other = await shop();
    const table: Array<[string, Parameters<typeof addAnswerTest>[1], RegExp]> = [
      ['no question', { question: '  ', expect: 'declines' }, /Question: type the question/],
      ['a long question', { question: 'x'.repeat(1001), expect: 'declines' }, /at most 1000 characters/],
      ['an unknown expectation', { question: 'Q?', expect: 'praises' as 'declines' }, /Expect: choose answers from, declines or mentions/],
      ['mentions without text', { question: 'Q?', expect: 'mentions', value: ' ' }, /Text: type the words/],
      ['no source', { question: 'Q?', expect: 'answers from' }, /Source: choose a document or curated answer/],
      ["another account's document", { question: 'Q?', expect: 'answers from', source: `document:${other.returns}` }, /Source: choose/],
    ];
    for (const [name, input, message] of table) {
      const r = await refusalOf(addAnswerTest(s.owner, input));
      assert.equal(r.code, 'invalid_request', name);
      assert.match(r.message, message, name);
    }
    assert.equal((await listAnswerTests(s.owner)).cases.length, 0);
  });

  it('deleting a source makes its case "Newly failing" through the automatic run within 60 s, with the banner on /knowledge', async () => {
    const s = await shop();
    await addAnswerTest(s.owner, { question: 'Can I return an item for a refund?', expect: 'answers from', source: `document:${s.returns}` });
    await addAnswerTest(s.owner, { question: 'How much is express shipping?', expect: 'mentions', value: '9 euros' });
    assert.equal((await runAnswerTests(s.owner)).passed, 2);

    const changed = Date.now();
    await removeKnowledgeDocument(s.acct.accountId, s.returns);
    let listed = await listAnswerTests(s.owner);
    assert.equal(listed.state?.due, true, 'the change marks the tests due');
    while (listed.state?.last_trigger !== 'automatic' || listed.state.due || listed.state.running) {
      assert.ok(Date.now() - changed < 60_000, 'the automatic run came within 60 s');
      await new Promise((r) => setTimeout(r, 200));
      listed = await listAnswerTests(s.owner);
    }
    const [returns, shipping] = listed.cases;
    assert.deepEqual([returns!.passed, returns!.newly_failing, returns!.source_gone, returns!.value], [false, true, true, 'Returns policy']);
    assert.deepEqual([shipping!.passed, shipping!.newly_failing], [true, false]);
    assert.deepEqual(await newlyFailingAnswerTests(s.acct.accountId), ['Can I return an item for a refund?']);

    const cookie = (await signIn(server.url, s.acct.email, s.acct.password)).cookie!;
    const knowledge = await (await fetch(`${server.url}/knowledge`, { headers: { cookie } })).text();
    assert.match(knowledge, /Newly failing:.*1 answer test.*Can I return an item for a refund\?/s);
    const page = await (await fetch(`${server.url}/bot/tests`, { headers: { cookie } })).text();
    assert.match(page, /Newly failing/);

    // A run by hand with nothing changed: it still fails, but is no longer newly failing.
    await runAnswerTests(s.owner);
    assert.deepEqual(await newlyFailingAnswerTests(s.acct.accountId), []);
  });

  /** The account's run state as the database holds it (its own clock). */
  async function runState(accountId: number) {
    const [row] = await rows<{
      kb_version: number;
      tested_version: number;
      last_trigger: string | null;
      last_run_at: string | null;
      ran_after_last_edit_s: number | null;
      running: boolean;
    }>(
      await getDb(),
      sql`SELECT kb_version::int AS kb_version, tested_version::int AS tested_version, last_trigger, last_run_at::text AS last_run_at,
            extract(epoch FROM last_run_at - kb_changed_at)::float8 AS ran_after_last_edit_s, COALESCE(lease_until > now(), false) AS running
          FROM answer_test_state WHERE account_id = ${accountId}`,
    );
    return row!;
  }

  it('a burst of edits gets one automatic run once the edits pause (or one per ANSWER_TESTS_MAX_WAIT_SECONDS while they go on), testing the last version; then none', async () => {
    const s = await shop();
    await addAnswerTest(s.owner, { question: 'Do you have gift cards?', expect: 'answers from', source: `curated:${s.curated}` });
    await runAnswerTests(s.owner);
    const manual = (await runState(s.acct.accountId)).last_run_at;
    // Eight edits 250 ms apart: each resets the 1 s pause the automatic run waits for.
    const runs = new Set<string>();
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const st = await runState(s.acct.accountId);
        if (st.last_trigger === 'automatic' && st.last_run_at && st.last_run_at !== manual) runs.add(st.last_run_at);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const burstStarted = Date.now();
    let firstEdit = '';
    for (let i = 0; i < 8; i++) {
      await addCuratedAnswer(s.acct.accountId, { questions: [`Burst question ${i}?`], answer: `Burst answer ${i}.` });
      if (i === 0)
        firstEdit = (
          await rows<{ at: string }>(await getDb(), sql`SELECT kb_changed_at::text AS at FROM answer_test_state WHERE account_id = ${s.acct.accountId}`)
        )[0]!.at;
      await new Promise((r) => setTimeout(r, 250));
    }
    const burstSeconds = (Date.now() - burstStarted) / 1000;
    const edited = (await runState(s.acct.accountId)).kb_version;
    let st = await runState(s.acct.accountId);
    for (const t0 = Date.now(); st.tested_version < edited || st.running; st = await runState(s.acct.accountId)) {
      assert.ok(Date.now() - t0 < 60_000, 'the automatic run came within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    // Nothing changed since: no further run.
    await new Promise((r) => setTimeout(r, 2000));
    polling = false;
    await poll;
    st = await runState(s.acct.accountId);
    assert.equal(st.tested_version, edited, 'the last run tested the last edit');
    assert.equal(st.last_trigger, 'automatic');
    // The last run came once the edits paused 1 s, or (edits slow under load) when the first was 3 s old.
    const [{ after_first }] = (await rows<{ after_first: number }>(
      await getDb(),
      sql`SELECT extract(epoch FROM last_run_at - ${firstEdit}::timestamptz)::float8 AS after_first FROM answer_test_state WHERE account_id = ${s.acct.accountId}`,
    )) as [{ after_first: number }];
    assert.ok(
      st.ran_after_last_edit_s! >= 1 || after_first >= 3,
      `the run waited for a 1 s pause or the 3 s maximum (ran ${st.ran_after_last_edit_s} s after the last edit, ${after_first} s after the first)`,
    );
    // The file's ANSWER_TESTS_MAX_WAIT_SECONDS is 3: a burst longer than that may be run once meanwhile.
    assert.ok(runs.size >= 1 && runs.size <= 1 + Math.floor(burstSeconds / 3), `${runs.size} automatic runs for a ${burstSeconds.toFixed(1)} s burst`);
  });

  it("a run told to stop (the loop's drain at shutdown) records nothing and frees the lease; the tests stay due and the automatic run takes them", async () => {
    const s = await shop();
    await addAnswerTest(s.owner, { question: 'Do you have gift cards?', expect: 'answers from', source: `curated:${s.curated}` });
    await addAnswerTest(s.owner, { question: 'How much is express shipping?', expect: 'mentions', value: '9 euros' });
    await runAnswerTests(s.owner);
    const before = await runState(s.acct.accountId);
    // The lease first (nothing is due, so the background loop never holds it), then a change: the run stays ours.
    const claimed = await claimAnswerTestRun(await getDb(), s.acct.accountId, 60);
    assert.ok(claimed, 'the lease was free');
    await addCuratedAnswer(s.acct.accountId, { questions: ['Do you deliver on Sundays?'], answer: 'No, never on Sundays.' });
    let asked = 0;
    const run = await runClaimed(s.acct.accountId, claimed.kb_version, 'automatic', () => asked++ >= 1);
    assert.equal(run, null, 'stopped between two cases');
    const stopped = await runState(s.acct.accountId);
    assert.deepEqual(
      [stopped.running, stopped.last_run_at, stopped.last_trigger, stopped.tested_version < stopped.kb_version],
      [false, before.last_run_at, 'manual', true],
      'nothing recorded, the lease free, still due',
    );
    let st = stopped;
    for (const t0 = Date.now(); st.tested_version < stopped.kb_version || st.running; st = await runState(s.acct.accountId)) {
      assert.ok(Date.now() - t0 < 60_000, 'the automatic run took the stopped one over within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(st.last_trigger, 'automatic');
    assert.equal((await listAnswerTests(s.owner)).cases.filter((c) => c.passed).length, 2);
  });

  it('a CSV round trip keeps every case (formula-like text neutralised on export); bad CSVs are refused whole with a clear message', async () => {
    const s = await shop();
    await addAnswerTest(s.owner, { question: 'Can I return an item, "with" a receipt?', expect: 'answers from', source: `document:${s.returns}` });
    await addAnswerTest(s.owner, { question: 'Do you sell gift cards?', expect: 'answers from', source: `curated:${s.curated}` });
    await addAnswerTest(s.owner, { question: '=1+1 is what?', expect: 'declines' });
    await addAnswerTest(s.owner, { question: 'How much is express shipping?', expect: 'mentions', value: '-9 euros' });
    const csv = await exportAnswerTestsCsv(s.owner);
    assert.equal(
      csv,
      [
        'question,expect,value',
        '"Can I return an item, ""with"" a receipt?",answers from,Returns policy',
        'Do you sell gift cards?,answers from,Curated answer: Do you have gift cards?',
        "'=1+1 is what?,declines,",
        "How much is express shipping?,mentions,'-9 euros",
        '',
      ].join('\n'),
    );

    const t = await shop();
    assert.deepEqual(await importAnswerTestsCsv(t.owner, csv), { imported: 4 });
    assert.equal(await exportAnswerTestsCsv(t.owner), csv, 'the same file back');
    assert.deepEqual(
      (await listAnswerTests(t.owner)).cases.map((c) => c.question),
      ['Can I return an item, "with" a receipt?', 'Do you sell gift cards?', '=1+1 is what?', 'How much is express shipping?'],
    );

    const u = await shop();
    const many = `question,expect,value\n${Array.from({ length: 10_000 }, (_, i) => `Question ${i}?,declines,`).join('\n')}\n`;
    const bad: Array<[string, string, string, RegExp]> = [
      ['10,000 rows', many, 'invalid_request', /has 10000 tests; this account can add 500 more \(at most 500\)\. Nothing was imported/],
      ['broken quotes', 'question,expect,value\n"Can I return,declines,\nOther?,declines,\n', 'invalid_request', /could not be read: Quote Not Closed/],
      ['a stray quote', 'question,expect,value\nCan I "return" it?,declines,\n', 'invalid_request', /could not be read: Invalid Opening Quote/],
      [
        'a formula cell',
        'question,expect,value\nOk?,declines,\n"=HYPERLINK(""http://x"")",declines,\n',
        'invalid_request',
        /Formula cells are refused \(line 3: a cell starts with "="/,
      ],
      ['an @ cell', 'question,expect,value\nWhat?,mentions,@SUM(A1)\n', 'invalid_request', /line 2: a cell starts with "@"/],
      ['no header', 'Can I return it?,declines,\n', 'invalid_request', /first line must be the header question,expect,value/],
      ['a missing cell', 'question,expect,value\nCan I return it?,declines\n', 'invalid_request', /could not be read: Invalid Record Length/],
      ['an unknown expectation', 'question,expect,value\nOk?,declines,\nCan I return it?,praises,\n', 'invalid_request', /^Line 3: Expect: choose/],
      [
        'an unknown source',
        'question,expect,value\nCan I return it?,answers from,Warranty\n',
        'invalid_request',
        /Line 2: Source: .*no document or curated answer named "Warranty"/,
      ],
      ['mentions without text', 'question,expect,value\nCan I return it?,mentions,\n', 'invalid_request', /Line 2: Text: type the words/],
      ['only a header', 'question,expect,value\n', 'invalid_request', /no tests under its header/],
      ['over 1 MB', `question,expect,value\n${'x'.repeat(1_000_001)},declines,\n`, 'payload_too_large', /larger than 1000000 bytes/],
    ];
    for (const [name, text, code, message] of bad) {
      const r = await refusalOf(importAnswerTestsCsv(u.owner, text));
      assert.equal(r.code, code, name);
      assert.match(r.message, message, name);
    }
    assert.equal((await listAnswerTests(u.owner)).cases.length, 0, 'nothing imported from a refused file');
  });

  it('agents get the 404 page and a 403 for every action; another account sees none of the cases', async () => {
    const s = await shop();
    await addAnswerTest(s.owner, { question: 'Can I return an item for a refund?', expect: 'declines' });
    const email = `agent-${randomUUID()}@example.test`;
    await createAdminUser(CLI, { accountId: s.acct.accountId, email, password: 'agent password 1', role: 'agent' });
    const agent: AnswerTestActor = { accountId: s.acct.accountId, role: 'agent' };
    const cookie = (await signIn(server.url, email, 'agent password 1')).cookie!;
    for (const path of ['/bot/tests', '/bot/tests/export']) {
      const r = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: 'manual' });
      assert.equal(r.status, 404, path);
    }
    const owner = (await signIn(server.url, s.acct.email, s.acct.password)).cookie!;
    const exported = await fetch(`${server.url}/bot/tests/export`, { headers: { cookie: owner } });
    assert.equal(exported.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(await exported.text(), 'question,expect,value\nCan I return an item for a refund?,declines,\n');
    const id = (await listAnswerTests(s.owner)).cases[0]!.id;
    const actions: Array<[string, () => Promise<unknown>]> = [
      ['list', () => listAnswerTests(agent)],
      ['sources', () => answerTestSources(agent)],
      ['add', () => addAnswerTest(agent, { question: 'Q?', expect: 'declines' })],
      ['remove', () => removeAnswerTest(agent, id)],
      ['run', () => runAnswerTests(agent)],
      ['import', () => importAnswerTestsCsv(agent, 'question,expect,value\nQ?,declines,\n')],
      ['export', () => exportAnswerTestsCsv(agent)],
    ];
    for (const [name, act] of actions) assert.equal((await refusalOf(act())).code, 'forbidden', name);

    const other = await shop();
    assert.deepEqual((await listAnswerTests(other.owner)).cases, []);
    assert.equal(await exportAnswerTestsCsv(other.owner), 'question,expect,value\n');
    assert.equal((await refusalOf(removeAnswerTest(other.owner, id))).code, 'not_found');
    assert.equal((await runAnswerTests(other.owner)).cases.length, 0);
    assert.equal((await listAnswerTests(s.owner)).cases.length, 1, 'still there');
  });

  it('bot test prints the run as JSON and exits 1 when a case fails, 0 when all pass', { timeout: 180_000 }, async () => {
    const s = await shop();
    await addAnswerTest(s.owner, { question: 'Can I return an item for a refund?', expect: 'answers from', source: `document:${s.returns}` });
    await addAnswerTest(s.owner, { question: 'How much is express shipping?', expect: 'mentions', value: '12 euros' });
    const pass = await shop();
    await addAnswerTest(pass.owner, { question: 'What is the capital of Mongolia?', expect: 'declines' });
    // The embedded database has one owner: the server lets go of it (keeping the data) for the CLI.
    await server.close({ keepData: true });
    try {
      const failing = await runCli(['bot', 'test', '--account', String(s.acct.accountId)]);
      assert.equal(failing.code, 1, failing.stderr);
      assert.deepEqual(JSON.parse(failing.stdout), {
        passed: 1,
        failed: 1,
        cases: [
          { question: 'Can I return an item for a refund?', expect: 'answers from', value: 'Returns policy', passed: true, first_source: 'Returns policy' },
          { question: 'How much is express shipping?', expect: 'mentions', value: '12 euros', passed: false, first_source: 'Shipping' },
        ],
      });
      assert.deepEqual(parseSuccess(await runCli(['bot', 'test', '--account', String(pass.acct.accountId)])), {
        passed: 1,
        failed: 0,
        cases: [{ question: 'What is the capital of Mongolia?', expect: 'declines', value: '', passed: true, first_source: null }],
      });
      const unknown = await runCli(['bot', 'test', '--account', '2000000000']);
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stdout, '');
      assert.match(unknown.stderr, /^error: .*2000000000/);
    } finally {
      if (server.dataDir) fs.rmSync(server.dataDir, { recursive: true, force: true });
    }
  });
});
