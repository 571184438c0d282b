import fs from 'node:fs';
import readline from 'node:readline';
import { getDatabase, type Db } from '../../db/client';
import { lockAccountForWrite } from '../../db/queries/accounts';
import {
  applyImport,
  conversationCopyRow,
  createImportStaging,
  findImportProblems,
  responseCopyRow,
  stageConversationRows,
  stageResponseRows,
  vacuumRecordTables,
  type LineProblem,
} from '../../db/queries/imports';
import { AppError } from '../core/errors';
import { IMPORT_HANDOFF_FIELDS, parseImportLine, type ImportConversation } from './contract';

const MAX_REPORTED = 20;
const PROGRESS_MIN_BYTES = 8 * 1024 * 1024;
/** Characters of COPY rows sent per COPY statement: big enough to amortise a round trip, small enough for PGlite's blob. */
const COPY_CHUNK_CHARS = 8 * 1024 * 1024;
const VACUUM_MIN_RECORDS = 20_000;

export type ImportResult = { conversations: number; responses: number };

/** Where an import is: `message` on phase changes and every 250,000 lines; ticks (no message) in between. */
export type ImportProgress = {
  phase: 'reading' | 'checking' | 'writing' | 'statistics' | 'done';
  /** Fraction of the input read (reading), else 1. */
  fraction: number;
  lines: number;
  records: number;
  elapsedMs: number;
  message?: string;
};
type Progress = (p: ImportProgress) => void;

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
  /** Whether to report progress (large inputs). */
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
    return await importNdjson(
      accountId,
      {
        lines: () => {
          stream = fs.createReadStream(filePath, { encoding: 'utf8', highWaterMark: 1 << 20 });
          return readline.createInterface({ input: stream, crlfDelay: Infinity });
        },
        fractionRead: () => (stream?.bytesRead ?? 0) / Math.max(size, 1),
        large: size >= PROGRESS_MIN_BYTES,
      },
      progress,
    );
  } finally {
    stream?.destroy();
  }
}

/**
 * COPY rows of one staging table, sent in chunks with at most one COPY in flight (one connection
 * carries one COPY at a time), so parsing the next chunk overlaps the database loading this one.
 */
class StagingBuffer {
  private parts: string[] = [];
  private chars = 0;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly send: (rows: string) => Promise<void>) {}

  async add(row: string): Promise<void> {
    this.parts.push(row);
    this.chars += row.length;
    if (this.chars >= COPY_CHUNK_CHARS) await this.flush();
  }

  /** Starts sending what is buffered once the previous chunk is in; resolves when this one started. */
  async flush(): Promise<void> {
    if (this.chars === 0) return;
    const data = this.parts.join('');
    this.parts = [];
    this.chars = 0;
    await this.inFlight;
    this.inFlight = this.send(data);
    this.inFlight.catch(() => {}); // awaited by the next flush or by done()
  }

  async done(): Promise<void> {
    await this.flush();
    await this.inFlight;
  }
}

/**
 * Imports NDJSON lines into one account in ONE transaction: lines are checked one by one and
 * COPied into staging tables, every rule that needs the whole file or the database is checked
 * as set queries over them, and only a fully valid input is upserted. Any problem rolls
 * everything back; the error names the lines.
 */
export async function importNdjson(accountId: number, source: LineSource, progress: Progress = () => {}): Promise<ImportResult> {
  const database = await getDatabase();
  const started = Date.now();
  const counts = { conversations: 0, responses: 0 };
  let lineNo = 0;
  const report = (phase: ImportProgress['phase'], message?: string) => {
    if (!source.large) return;
    const fraction = phase === 'reading' ? Math.min(source.fractionRead?.() ?? 0, 1) : 1;
    const elapsedMs = Date.now() - started;
    progress({
      phase,
      fraction,
      lines: lineNo,
      records: counts.conversations + counts.responses,
      elapsedMs,
      message: message && `${message} [${(elapsedMs / 1000).toFixed(1)} s]`,
    });
  };

  await database.db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    if (!(await lockAccountForWrite(tx, accountId))) throw new AppError('not_found', `No account with id ${accountId}.`);
    await createImportStaging(tx);
    report('reading', 'import: reading');

    // One connection: the two tables' chunks go one after the other, never two COPYs at once.
    let previous: Promise<void> = Promise.resolve();
    const serial = (send: (db: Db, rows: string) => Promise<void>) => (rows: string) => {
      const next = previous.then(() => send(tx, rows));
      previous = next.catch(() => {});
      return next;
    };
    const conversationRows = new StagingBuffer(serial(stageConversationRows));
    const responseRows = new StagingBuffer(serial(stageResponseRows));

    const problems: LineProblem[] = [];
    let problemCount = 0;
    let nextMessage = 250_000;
    let nextTick = 10_000;
    const fail = (line: number, message: string) => {
      problemCount++;
      if (problems.length < MAX_REPORTED) problems.push({ line, message });
    };

    for await (let text of typeof source.lines === 'function' ? source.lines() : source.lines) {
      lineNo++;
      if (lineNo === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (lineNo >= nextTick) {
        nextTick += 10_000;
        if (lineNo >= nextMessage) {
          nextMessage += 250_000;
          report('reading', `import: ${lineNo} lines read (${Math.round((source.fractionRead?.() ?? 0) * 100)}%)`);
        } else {
          report('reading');
        }
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        if (text.trim() === '') continue;
        fail(lineNo, 'not valid JSON');
        continue;
      }
      const parsed = parseImportLine(value);
      if (!parsed.ok) {
        fail(lineNo, parsed.problem);
        continue;
      }
      const v = parsed.value;
      if (v.type === 'conversation') {
        counts.conversations++;
        if (problemCount > 0) continue;
        await conversationRows.add(
          conversationCopyRow({
            line: lineNo,
            id: v.conversation_id,
            title: v.title,
            status: v.status,
            channel_id: v.channel_id,
            channel_name: v.channel_name,
            created_at: v.created_at,
            updated_at: v.updated_at,
            handoff: handoffFieldsOf(v),
          }),
        );
      } else {
        counts.responses++;
        if (problemCount > 0) continue;
        await responseRows.add(
          responseCopyRow({
            line: lineNo,
            id: v.response_id,
            conversation_id: v.conversation_id,
            question: v.question,
            answer: v.answer,
            channel_id: v.channel_id,
            created_at: v.created_at,
            likes: v.likes,
            dislikes: v.dislikes,
            comments: v.comments,
          }),
        );
      }
    }
    await conversationRows.done().catch((e) => {
      if (problemCount === 0) throw e;
    });
    await responseRows.done().catch((e) => {
      if (problemCount === 0) throw e;
    });
    if (problemCount > 0) throw rejection(problems, problemCount);

    report('checking', `import: ${lineNo} lines read; checking references`);
    const found = await findImportProblems(tx, accountId, MAX_REPORTED + 1);
    if (found.length > 0) throw rejection(found.slice(0, MAX_REPORTED), found.length);
    report('writing', 'import: writing records');
    await applyImport(tx, accountId, (step) => report('writing', `import: writing ${step}`));
  });

  if (counts.responses + counts.conversations >= VACUUM_MIN_RECORDS) {
    report('statistics', 'import: refreshing statistics');
    await vacuumRecordTables(database.db);
  }
  const seconds = (Date.now() - started) / 1000;
  const total = counts.conversations + counts.responses;
  report('done', `import: ${total} records in ${seconds.toFixed(1)} s (${Math.round(total / Math.max(seconds, 0.001))} records/s)`);
  return counts;
}

/** The handoff fields the line gives (only those), or null. */
function handoffFieldsOf(v: ImportConversation): Record<string, unknown> | null {
  const given = IMPORT_HANDOFF_FIELDS.filter((f) => v[f] !== undefined);
  return given.length === 0 ? null : Object.fromEntries(given.map((f) => [f, v[f]]));
}
