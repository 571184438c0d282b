import { CsvError, parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { AppError } from '../core/errors';
import { ANSWER_TEST_LIMITS } from './contract';

export const CSV_COLUMNS = ['question', 'expect', 'value'] as const;
export type CsvRow = { line: number; question: string; expect: string; value: string };

/** A cell a spreadsheet would run as a formula (OWASP "CSV injection"): =, +, -, @, tab or carriage return first. */
const FORMULA = /^[=+\-@\t\r]/;

/**
 * The rows of an answer-tests CSV (header `question,expect,value`), or a refusal naming the line:
 * unreadable CSV (broken quotes, a wrong number of cells), more rows than `maxRows`, and formula
 * cells. A cell written as `'=…` (how the export neutralises one) is read without its apostrophe.
 */
export function parseAnswerTestsCsv(text: string, maxRows: number): CsvRow[] {
  if (Buffer.byteLength(text) > ANSWER_TEST_LIMITS.csvBytes)
    throw new AppError('payload_too_large', `The CSV is larger than ${ANSWER_TEST_LIMITS.csvBytes} bytes.`);
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: false, max_record_size: 10_000 }) as string[][];
  } catch (e) {
    if (e instanceof CsvError) throw new AppError('invalid_request', `The CSV could not be read: ${e.message.replace(/\.$/, '')}. Nothing was imported.`);
    throw e;
  }
  const [header, ...body] = records;
  if (!header || header.map((h) => h.trim().toLowerCase()).join(',') !== CSV_COLUMNS.join(','))
    throw new AppError('invalid_request', `The CSV's first line must be the header ${CSV_COLUMNS.join(',')}. Nothing was imported.`);
  if (body.length === 0) throw new AppError('invalid_request', 'The CSV has no tests under its header.');
  if (body.length > maxRows)
    throw new AppError(
      'invalid_request',
      `The CSV has ${body.length} tests; this account can add ${maxRows} more (at most ${ANSWER_TEST_LIMITS.cases}). Nothing was imported.`,
    );
  const problems: string[] = [];
  const rows = body.map((cells, i) => {
    const line = i + 2;
    const [question, expect, value] = cells.map((c) => {
      if (/^'[=+\-@]/.test(c)) return c.slice(1);
      if (FORMULA.test(c)) problems.push(`line ${line}: a cell starts with ${JSON.stringify(c[0])}, which spreadsheets run as a formula`);
      return c;
    }) as [string, string, string];
    return { line, question, expect, value };
  });
  if (problems.length > 0)
    throw new AppError(
      'invalid_request',
      `Formula cells are refused (${problems.slice(0, 5).join('; ')}${problems.length > 5 ? '; …' : ''}). Nothing was imported.`,
    );
  return rows;
}

/** The cases as CSV; a cell that would start a formula gets a leading apostrophe (the import removes it). */
export function answerTestsCsv(cases: Array<{ question: string; expect: string; value: string }>): string {
  const safe = (c: string) => (FORMULA.test(c) ? `'${c}` : c);
  return stringify(
    cases.map((c) => [safe(c.question), c.expect, safe(c.value)]),
    { header: true, columns: [...CSV_COLUMNS] },
  );
}
