import { z } from 'zod';

/** What a case expects of the answer (docs/contracts.md §20): the options of select "Expect", as written. */
export const ANSWER_TEST_EXPECTS = ['answers from', 'declines', 'mentions'] as const;
export const AnswerTestExpect = z.enum(ANSWER_TEST_EXPECTS, { error: 'Expect: choose answers from, declines or mentions.' });

/** Bounds (docs/decisions/answer-tests.md): a run of the most cases stays within minutes, a CSV within memory. */
export const ANSWER_TEST_LIMITS = { cases: 500, questionChars: 1000, mentionChars: 200, csvBytes: 1_000_000 };

/**
 * A case as the page and the CSV give it: for `answers from`, `source` is `document:<lineage id>`
 * or `curated:<id>` (the page's select) and `value` a source's name (the CSV); for `mentions`,
 * `value` is the text the answer must contain.
 */
export const AnswerTestInput = z.object({
  question: z.string(),
  expect: AnswerTestExpect,
  value: z.string().default(''),
  source: z.string().optional(),
});
export type AnswerTestInput = z.input<typeof AnswerTestInput>;

/** One case of a run, as `bot test` prints it. */
export type AnswerTestCaseResult = { question: string; expect: string; value: string; passed: boolean; first_source: string | null };
/** A run's outcome (the CLI's JSON, docs/contracts.md §20). */
export type AnswerTestRun = { passed: number; failed: number; cases: AnswerTestCaseResult[] };
