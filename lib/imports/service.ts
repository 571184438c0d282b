import fs from 'node:fs';
import readline from 'node:readline';
import { getDatabase, type Db } from '../../db/client';
import { lockAccountForWrite } from '../../db/queries/accounts';
import {
  applyImport, createImportStaging, findImportProblems, stageConversations, stageResponses, vacuumRecordTables,
  type LineProblem, type StagedConversation, type StagedResponse,
} from '../../db/queries/imports';
import { AppError } from '../api/errors';
import { ImportConversationLine, ImportResponseLine } from './contract';

const BATCH = 2000;
const MAX_REPORTED = 20;
const PROGRESS_MIN_BYTES = 8 * 1024 * 1024;

export type ImportResult = { conversations: number; responses: number };
type Progress = (message: string) => void;

function describeIssues(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join(', ');
}

function rejection(problems: LineProblem[], total: number): AppError {
  const shown = problems.map((p) => `line ${p.line}: ${p.message}`).join('; ');
  const more = total > problems.length ? '; and more' : '';
  const howMany = total > problems.length ? `more than ${problems.length} problems` : `${total} problem${total === 1 ? '' : 's'}`;
  return new AppError('invalid_request', `Import rejected, nothing was written (${howMany}): ${shown}${more}`);
}

export type LineSource = {
  /** The lines, or a function that opens them when the import is ready to read (a file). */
  lines: AsyncIterable<string> | Iterable<string> | (() => AsyncIterable<string>);
  /** Fraction of the input read so far, for progress messages. */
  fractionRead?: () => number;
  /** Whether to print progress (large inputs). */
  large?: boolean;
};

/** Imports an NDJSON file; see importNdjson. The file is streamed, never held in memory. */
export async function importNdjsonFile(accountId: number, filePath: string, progress: Progress = () => {}): Promise<ImportResult> {
  let size: number;
  try {
    const stat = fs.statSync(filePath);
    if (!stat.isFile()) throw new Error('not a regular file');
    size = stat.size;
    fs.accessSync(filePath, fs.constants.R_OK);
  } catch (e) {
    throw new AppError('invalid_request', `Cannot read ${filePath}: ${(e as Error).message}`);
  }
  // The file is opened only when the import reads it: a readline interface created earlier
  // would emit its lines before anyone listens, and they would be lost.
  let stream: fs.ReadStream | undefined;
  try {
    return await importNdjson(accountId, {
      lines: () => {
        stream = fs.createReadStream(filePath, { encoding: 'utf8', highWaterMark: 1 << 20 });
        return readline.createInterface({ input: stream, crlfDelay: Infinity });
      },
      fractionRead: () => (stream?.bytesRead ?? 0) / Math.max(size, 1),
      large: size >= PROGRESS_MIN_BYTES,
    }, progress);
  } finally {
    stream?.destroy();
  }
}

/**
 * Imports NDJSON lines into one account in ONE transaction: lines go into staging tables as
 * they arrive, every rule is checked, and only a fully valid input is upserted. Any problem
 * rolls everything back; the error names the lines.
 */
export async function importNdjson(accountId: number, source: LineSource, progress: Progress = () => {}): Promise<ImportResult> {
  const database = await getDatabase();
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const report = source.large ? (m: string) => progress(`${m} [${elapsed()}]`) : () => {};

  const result = await database.db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    if (!(await lockAccountForWrite(tx, accountId))) throw new AppError('not_found', `No account with id ${accountId}.`);
    await createImportStaging(tx);

    const problems: LineProblem[] = [];
    let problemCount = 0;
    let conversations: StagedConversation[] = [];
    let responses: StagedResponse[] = [];
    const counts = { conversations: 0, responses: 0 };
    let lineNo = 0;
    let nextReport = 250_000;
    const fail = (line: number, message: string) => {
      problemCount++;
      if (problems.length < MAX_REPORTED) problems.push({ line, message });
    };

    for await (let text of (typeof source.lines === 'function' ? source.lines() : source.lines)) {
      lineNo++;
      if (lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (lineNo >= nextReport) {
        report(`import: ${lineNo} lines read (${Math.round((source.fractionRead?.() ?? 0) * 100)}%)`);
        nextReport += 250_000;
      }
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        fail(lineNo, 'not valid JSON');
        continue;
      }
      const type = (value as { type?: unknown } | null)?.type;
      if (type === 'conversation') {
        const r = ImportConversationLine.safeParse(value);
        if (!r.success) { fail(lineNo, `conversation: ${describeIssues(r.error)}`); continue; }
        counts.conversations++;
        if (problemCount > 0) continue;
        const c = r.data;
        conversations.push({ line: lineNo, id: c.conversation_id, title: c.title, status: c.status, channel_id: c.channel_id,
          channel_name: c.channel_name, created_at: c.created_at, updated_at: c.updated_at });
        if (conversations.length >= BATCH) { await stageConversations(tx, conversations); conversations = []; }
      } else if (type === 'response') {
        const r = ImportResponseLine.safeParse(value);
        if (!r.success) { fail(lineNo, `response: ${describeIssues(r.error)}`); continue; }
        counts.responses++;
        if (problemCount > 0) continue;
        const v = r.data;
        responses.push({ line: lineNo, id: v.response_id, conversation_id: v.conversation_id, question: v.question,
          answer: v.answer, channel_id: v.channel_id, created_at: v.created_at, likes: v.likes, dislikes: v.dislikes,
          comments: v.comments });
        if (responses.length >= BATCH) { await stageResponses(tx, responses); responses = []; }
      } else {
        fail(lineNo, 'type must be "conversation" or "response"');
      }
    }
    if (problemCount > 0) throw rejection(problems, problemCount);
    await stageConversations(tx, conversations);
    await stageResponses(tx, responses);

    report(`import: ${lineNo} lines read; checking references`);
    const found = await findImportProblems(tx, accountId, MAX_REPORTED + 1);
    if (found.length > 0) throw rejection(found.slice(0, MAX_REPORTED), found.length);
    report('import: writing records');
    await applyImport(tx, accountId);
    return counts;
  });

  if (result.responses + result.conversations >= 20_000) {
    report('import: refreshing statistics');
    await vacuumRecordTables(database.db);
  }
  const seconds = (Date.now() - started) / 1000;
  const total = result.conversations + result.responses;
  report(`import: ${total} records in ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001))} records/s)`);
  return result;
}
