import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

export type AnswerTestExpect = 'answers from' | 'declines' | 'mentions';
export type AnswerTestSourceKind = 'document' | 'curated';

export type NewAnswerTestCase = {
  question: string;
  expect: AnswerTestExpect;
  value: string;
  source_kind: AnswerTestSourceKind | null;
  source_id: string | null;
};

/**
 * A case with the source's current name (`source_label`: a document's title, else its file name;
 * a curated answer's first question; null when the source is gone) and its last two results.
 */
export type AnswerTestCaseRow = NewAnswerTestCase & {
  id: string;
  created_at: string;
  source_label: string | null;
  last_passed: boolean | null;
  last_first_source: string | null;
  last_answer: string | null;
  last_run_at: string | null;
  prev_passed: boolean | null;
};

export async function countAnswerTestCases(db: Db, accountId: number): Promise<number> {
  const [row] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM answer_test_cases WHERE account_id = ${accountId}`);
  return row?.n ?? 0;
}

/** Inserts cases in one statement (a CSV import is all or nothing); returns how many. */
export async function insertAnswerTestCases(db: Db, accountId: number, cases: NewAnswerTestCase[]): Promise<number> {
  if (cases.length === 0) return 0;
  const inserted = await rows<{ id: string }>(
    db,
    sql`INSERT INTO answer_test_cases (account_id, question, expect, value, source_kind, source_id)
      SELECT ${accountId}, c.question, c.expect, c.value, c.source_kind, c.source_id::uuid
      FROM jsonb_to_recordset(${JSON.stringify(cases.map((c, ord) => ({ ...c, ord })))}::jsonb)
        AS c(question text, expect text, value text, source_kind text, source_id text, ord int)
      ORDER BY c.ord
      RETURNING id`,
  );
  return inserted.length;
}

export async function listAnswerTestCases(db: Db, accountId: number): Promise<AnswerTestCaseRow[]> {
  return rows<AnswerTestCaseRow>(
    db,
    sql`SELECT t.id, t.question, t.expect, t.value, t.source_kind, t.source_id, ${utcText(sql`t.created_at`)} AS created_at,
        CASE t.source_kind
          WHEN 'document' THEN (SELECT COALESCE(NULLIF(d.title, ''), d.filename) FROM kb_documents d
            WHERE d.account_id = t.account_id AND d.lineage_id = t.source_id AND d.superseded_at IS NULL AND d.conversation_id IS NULL LIMIT 1)
          WHEN 'curated' THEN (SELECT g.questions[1] FROM curated_answers g WHERE g.account_id = t.account_id AND g.id = t.source_id)
        END AS source_label,
        t.last_passed, t.last_first_source, t.last_answer, ${utcText(sql`t.last_run_at`)} AS last_run_at, t.prev_passed
      FROM answer_test_cases t WHERE t.account_id = ${accountId} ORDER BY t.seq`,
  );
}

export async function deleteAnswerTestCase(db: Db, accountId: number, id: string): Promise<boolean> {
  const deleted = await rows<{ id: string }>(db, sql`DELETE FROM answer_test_cases WHERE account_id = ${accountId} AND id = ${id} RETURNING id`);
  return deleted.length > 0;
}

export type AnswerTestResult = { id: string; passed: boolean; first_source: string | null; answer: string };

/** Stores a run's results: each case's last result becomes its previous one. Cases deleted meanwhile are skipped. */
export async function recordAnswerTestResults(db: Db, accountId: number, results: AnswerTestResult[]): Promise<void> {
  if (results.length === 0) return;
  await db.execute(
    sql`UPDATE answer_test_cases t SET prev_passed = t.last_passed, last_passed = r.passed, last_first_source = r.first_source,
        last_answer = r.answer, last_run_at = now()
      FROM jsonb_to_recordset(${JSON.stringify(results)}::jsonb) AS r(id uuid, passed boolean, first_source text, answer text)
      WHERE t.account_id = ${accountId} AND t.id = r.id`,
  );
}

/** The documents of the knowledge base (current versions) and curated answers a case can name as its source. */
export async function listAnswerTestSources(db: Db, accountId: number) {
  return rows<{ kind: AnswerTestSourceKind; id: string; label: string; filename: string | null }>(
    db,
    sql`SELECT 'document' AS kind, d.lineage_id AS id, COALESCE(NULLIF(d.title, ''), d.filename) AS label, d.filename
        FROM kb_documents d WHERE d.account_id = ${accountId} AND d.conversation_id IS NULL AND d.superseded_at IS NULL
      UNION ALL
      SELECT 'curated', g.id, g.questions[1], NULL FROM curated_answers g WHERE g.account_id = ${accountId}
      ORDER BY 1, 3`,
  );
}

/** The lineage of each of these documents (a source's identity across its versions). */
export async function documentLineages(db: Db, accountId: number, documentIds: string[]): Promise<Map<string, string>> {
  if (documentIds.length === 0) return new Map();
  const found = await rows<{ id: string; lineage_id: string }>(
    db,
    sql`SELECT d.id, d.lineage_id FROM kb_documents d
      WHERE d.account_id = ${accountId} AND d.id IN (SELECT jsonb_array_elements_text(${JSON.stringify(documentIds)}::jsonb)::uuid)`,
  );
  return new Map(found.map((r) => [r.id, r.lineage_id]));
}

/** Takes the account's run lease when no run holds it; the knowledge-base version the run tests, or null when busy. */
export async function claimAnswerTestRun(db: Db, accountId: number, leaseSeconds: number): Promise<{ kb_version: number } | null> {
  const [row] = await rows<{ kb_version: string }>(
    db,
    sql`INSERT INTO answer_test_state (account_id, lease_until) VALUES (${accountId}, now() + ${leaseSeconds} * interval '1 second')
      ON CONFLICT (account_id) DO UPDATE SET lease_until = EXCLUDED.lease_until
      WHERE answer_test_state.lease_until IS NULL OR answer_test_state.lease_until < now()
      RETURNING kb_version`,
  );
  return row ? { kb_version: Number(row.kb_version) } : null;
}

/**
 * Every account (a system query, for the background loop): claims one account whose knowledge
 * base changed since its last run, once edits paused `debounceSeconds` or the first untested change
 * is `maxWaitSeconds` old, and no run holds its lease; rows another instance is claiming are skipped.
 */
export async function claimDueAnswerTestRun(
  db: Db,
  o: { debounceSeconds: number; maxWaitSeconds: number; leaseSeconds: number },
): Promise<{ account_id: number; kb_version: number } | null> {
  const [row] = await rows<{ account_id: number; kb_version: string }>(
    db,
    sql`UPDATE answer_test_state s SET lease_until = now() + ${o.leaseSeconds} * interval '1 second'
      WHERE s.account_id = (
        SELECT account_id FROM answer_test_state
        WHERE kb_version > tested_version AND (lease_until IS NULL OR lease_until < now())
          AND (kb_changed_at <= now() - ${o.debounceSeconds} * interval '1 second' OR due_since <= now() - ${o.maxWaitSeconds} * interval '1 second')
        ORDER BY due_since LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING s.account_id, s.kb_version`,
  );
  return row ? { account_id: row.account_id, kb_version: Number(row.kb_version) } : null;
}

export async function renewAnswerTestLease(db: Db, accountId: number, leaseSeconds: number): Promise<void> {
  await db.execute(sql`UPDATE answer_test_state SET lease_until = now() + ${leaseSeconds} * interval '1 second' WHERE account_id = ${accountId}`);
}

/** Ends a run: the lease goes; with totals, the version it tested is recorded (later changes stay due). */
export async function finishAnswerTestRun(
  db: Db,
  accountId: number,
  run: { kb_version: number; trigger: string; passed: number; failed: number } | null,
): Promise<void> {
  if (!run) {
    await db.execute(sql`UPDATE answer_test_state SET lease_until = NULL WHERE account_id = ${accountId}`);
    return;
  }
  await db.execute(
    sql`UPDATE answer_test_state SET lease_until = NULL, tested_version = GREATEST(tested_version, ${run.kb_version}),
        due_since = CASE WHEN kb_version > GREATEST(tested_version, ${run.kb_version}) THEN kb_changed_at END,
        last_run_at = now(), last_trigger = ${run.trigger}, last_passed_count = ${run.passed}, last_failed_count = ${run.failed}
      WHERE account_id = ${accountId}`,
  );
}

export type AnswerTestStateRow = {
  due: boolean;
  running: boolean;
  last_run_at: string | null;
  last_trigger: string | null;
  last_passed_count: number | null;
  last_failed_count: number | null;
};

export async function getAnswerTestState(db: Db, accountId: number): Promise<AnswerTestStateRow | null> {
  const [row] = await rows<AnswerTestStateRow>(
    db,
    sql`SELECT kb_version > tested_version AS due, COALESCE(lease_until > now(), false) AS running, ${utcText(sql`last_run_at`)} AS last_run_at,
        last_trigger, last_passed_count, last_failed_count
      FROM answer_test_state WHERE account_id = ${accountId}`,
  );
  return row ?? null;
}

/** The questions of the cases that passed in the run before the last and failed in the last. */
export async function listNewlyFailingAnswerTests(db: Db, accountId: number): Promise<string[]> {
  const found = await rows<{ question: string }>(
    db,
    sql`SELECT question FROM answer_test_cases WHERE account_id = ${accountId} AND prev_passed AND last_passed = false ORDER BY seq`,
  );
  return found.map((r) => r.question);
}
