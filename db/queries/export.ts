import { sql, type SQL } from 'drizzle-orm';
import type { PgDialect } from 'drizzle-orm/pg-core';
import type { Readable } from 'node:stream';
import type { Db } from '../client';
import {
  CHANNEL_OF_CONVERSATION,
  CONVERSATION_SORT_COLUMNS,
  whereOf as conversationWhere,
  type ConversationFilter,
  type ConversationSortKey,
} from './conversations';
import { RESPONSE_SORT_COLUMNS, whereOf as responseWhere, type ResponseFilter, type ResponseSortKey } from './responses';
import { totalOrder, utcText, type Direction } from './shared';

/**
 * The export on PostgreSQL (docs/contracts.md §10): ONE `COPY (SELECT …) TO STDOUT (FORMAT binary)`
 * statement whose single text column is the finished line (an NDJSON record + "\n", or a CSV
 * record + CRLF), with the list's filter (the same `whereOf` builders) and the list's total order.
 * One statement reads one snapshot, so rows written meanwhile neither appear nor appear twice,
 * without paging; PostgreSQL encodes every record and Node only moves the bytes.
 *
 * Every line is byte-identical to what the keyset path (PGlite) writes in Node: `to_json(text)`
 * escapes exactly as JSON.stringify does (", \, \b \f \n \r \t, other controls as \u00xx,
 * everything else verbatim), keys are written in the record's order, and CSV fields are quoted by
 * csv-stringify's rule for the options the export uses (a field holding `,`, `"`, CR or LF is
 * quoted, quotes doubled). tests/api/customer-api-export.test.ts compares both.
 */
export type ExportFormat = 'ndjson' | 'csv';

/** A JSON string of a text value, as JSON.stringify writes it. */
const json = (x: SQL) => sql`to_json(${x})::text`;
/** A text cell that starts with =, +, -, @, tab or CR gets a leading ' (the keyset path's neutraliseCsvText). */
const neutral = (x: SQL) => sql`CASE WHEN ${x} ~ E'^[-=+@\\t\\r]' THEN '''' || ${x} ELSE ${x} END`;
/** A CSV field of a text value (csv-stringify's quoting with delimiter ',', quote '"', CRLF records), neutralised first. */
const csv = (text: SQL) => {
  const x = neutral(text);
  return sql`CASE WHEN ${x} ~ E'[",\\r\\n]' THEN '"' || replace(${x}, '"', '""') || '"' ELSE ${x} END`;
};
/** Concatenates SQL text pieces: `parts` alternate literal text (constants) and SQL expressions. */
const concat = (parts: Array<string | SQL>) =>
  sql.join(
    joinConstants(parts).map((p) => (typeof p === 'string' ? sql.raw(quoteText(p)) : sql`(${p})::text`)),
    sql` || `,
  );
/** Adjacent constants as one (the statement stays as short as if written by hand). */
function joinConstants(parts: Array<string | SQL>): Array<string | SQL> {
  const out: Array<string | SQL> = [];
  for (const p of parts) {
    const last = out.length - 1;
    if (typeof p === 'string' && typeof out[last] === 'string') out[last] += p;
    else out.push(p);
  }
  return out;
}

/**
 * A record's fields in its schema's order (lib/export/contract.ts): the JSON key, how the value is
 * written (`text` JSON-escaped / CSV-quoted, `string` a quoted JSON string that needs no escaping,
 * `number`/`boolean` bare (true/false); with `?` the column may be NULL: JSON null, an empty CSV field) and the column.
 * Adding a field to an export is one line here.
 */
type Kind = 'text' | 'string' | 'number' | 'boolean';
type Field = readonly [key: string, kind: Kind | `${Kind}?`, value: SQL];

function responseFields(): Field[] {
  return [
    ['response_id', 'string', sql`r.id`],
    ['id', 'string', sql`r.id`],
    ['question', 'text', sql`r.question`],
    ['answer', 'text', sql`r.answer`],
    ['channel_id', 'number', sql`r.channel_id`],
    ['conversation_id', 'string', sql`r.conversation_id`],
    ['created_at', 'string', utcText(sql`r.created_at`)],
    ['likes', 'number', sql`r.likes`],
    ['dislikes', 'number', sql`r.dislikes`],
    ['comments', 'number', sql`r.comments`],
    ['declined', 'boolean', sql`r.declined`],
  ];
}

function conversationFields(): Field[] {
  return [
    ['conversation_id', 'string', sql`c.id`],
    ['id', 'string', sql`c.id`],
    ['title', 'text', sql`c.title`],
    ['status', 'text', sql`c.status`],
    ['response_count', 'number', sql`c.response_count`],
    ['channel_id', 'number', sql`c.channel_id`],
    ['channel_name', 'text', sql`ch.name`],
    ['account_id', 'number', sql`c.account_id`],
    ['created_at', 'string', utcText(sql`c.created_at`)],
    ['updated_at', 'string', utcText(sql`c.updated_at`)],
    ['handled_by', 'text', sql`c.handled_by`],
    ['assignee', 'text?', ASSIGNEE],
    ['waiting_since', 'string?', utcText(sql`c.waiting_since`)],
    ['resolved_at', 'string?', utcText(sql`c.resolved_at`)],
    ['csat', 'number?', sql`c.csat`],
  ];
}

/** The record's `assignee`: the member's email (db/queries/conversations.ts reads it the same way). */
const ASSIGNEE = sql`(SELECT au.email FROM admin_users au WHERE au.id = c.assignee_id)`;

/** One CSV record (CRLF) of the fields, or the inside of a JSON object (its `{` but not its `}`). */
function csvRecord(fields: Field[]): SQL {
  const cell = ([, kind, value]: Field) => {
    const text = kind.startsWith('text') ? csv(value) : value;
    return kind.endsWith('?') ? sql`COALESCE((${text})::text, '')` : text;
  };
  return concat([...fields.flatMap((f, i) => [...(i > 0 ? [','] : []), cell(f)]), '\r\n']);
}
function jsonMembers(fields: Field[]): Array<string | SQL> {
  return fields.flatMap(([key, kind, value], i) => {
    const name = `${i > 0 ? ',' : '{'}"${key}":`;
    if (kind === 'string') return [`${name}"`, value, '"'];
    if (kind === 'text' || kind === 'number' || kind === 'boolean') return [name, kind === 'text' ? json(value) : value];
    const written = kind === 'text?' ? json(value) : kind === 'string?' ? sql`'"' || ${value} || '"'` : sql`(${value})::text`;
    return [name, sql`COALESCE(${written}, 'null')`];
  });
}

function responseLine(format: ExportFormat): SQL {
  return format === 'csv' ? csvRecord(responseFields()) : concat([...jsonMembers(responseFields()), '}\n']);
}

/**
 * A conversation's messages as a JSON array's inside, as GET /conversation/{id} gives them (the
 * second writer of lib/conversations/messages.ts messagesOf + toApiMessage, kept in SQL so
 * PostgreSQL encodes the export; tests/api/customer-api-export.test.ts holds both byte-identical):
 * each response (oldest first) a user message (its question) then an assistant message (its
 * answer), merged with the stored messages (conversation_messages, notes included) by created_at,
 * a response before a stored message, then seq, then id; each with the attachments of that message
 * (oldest first) and their download URL (`prefix` + id + `suffix`, the API's one link builder split
 * around the id).
 */
function messagesJson({ prefix, suffix }: { prefix: string; suffix: string }): SQL {
  const url = (id: SQL) => sql`${sql.raw(quoteText(prefix))} || ${id} || ${sql.raw(quoteText(suffix))}`;
  const attachment = jsonMembers([
    ['upload_id', 'string', sql`a.id`],
    ['filename', 'text', sql`a.filename`],
    ['content_type', 'text', sql`a.content_type`],
    ['size', 'number', sql`a.size`],
    ['url', 'text', url(sql`a.id`)],
  ]);
  const attachments = (messageId: SQL) => sql`COALESCE((SELECT string_agg(${concat([...attachment, '}'])}, ',' ORDER BY a.created_at, a.id)
    FROM attachments a WHERE a.conversation_id = c.id AND a.account_id = c.account_id AND a.message_id = ${messageId}), '')`;
  const message = (m: { id: SQL; role: SQL; author: SQL; authorName: SQL; content: SQL; at: SQL; responseId: SQL }) =>
    concat([
      ...jsonMembers([
        ['message_id', 'string', m.id],
        ['role', 'string', m.role],
        ['author', 'string', m.author],
        ['author_name', 'text?', m.authorName],
        ['content', 'text', m.content],
        ['created_at', 'string', utcText(m.at)],
        ['response_id', 'string?', m.responseId],
      ]),
      ',"attachments":[',
      attachments(m.id),
      ']}',
    ]);
  const half = (id: SQL, role: string, author: string, content: SQL) =>
    message({
      id,
      role: sql.raw(quoteText(role)),
      author: sql.raw(quoteText(author)),
      authorName: sql`NULL::text`,
      content,
      at: sql`r.created_at`,
      responseId: sql`r.id`,
    });
  const stored = message({
    id: sql`m.id`,
    role: sql`CASE WHEN m.author = 'visitor' THEN 'user' ELSE 'assistant' END`,
    author: sql`m.author`,
    authorName: sql`m.author_name`,
    content: sql`m.text`,
    at: sql`m.created_at`,
    responseId: sql`NULL::text`,
  });
  return sql`COALESCE((SELECT string_agg(u.line, ',' ORDER BY u.at, u.rank, u.seq, u.id) FROM (
      SELECT r.created_at AS at, 0 AS rank, 0::bigint AS seq, r.id, ${half(sql`r.question_message_id`, 'user', 'visitor', sql`r.question`)} || ',' ||
        ${half(sql`r.answer_message_id`, 'assistant', 'ai', sql`r.answer`)} AS line
      FROM responses r WHERE r.conversation_id = c.id AND r.account_id = c.account_id
      UNION ALL
      SELECT m.created_at, 1, m.seq, m.id, ${stored} FROM conversation_messages m WHERE m.conversation_id = c.id AND m.account_id = c.account_id
    ) u), '')`;
}

function conversationLine(format: ExportFormat, messages: { prefix: string; suffix: string } | null): SQL {
  if (format === 'csv') return csvRecord(conversationFields());
  return concat([...jsonMembers(conversationFields()), ...(messages ? [',"messages":[', messagesJson(messages), ']'] : []), '}\n']);
}

/** The response export's statement: the list's filter and order, one finished line per row. */
export function responseExportStatement(accountId: number, f: ResponseFilter, sortKey: ResponseSortKey, dir: Direction, format: ExportFormat): SQL {
  return sql`SELECT ${responseLine(format)} FROM responses r
    WHERE ${responseWhere(accountId, f)} ORDER BY ${totalOrder('r', RESPONSE_SORT_COLUMNS[sortKey], dir).rows}`;
}

/** The conversation export's statement; `messages` (the attachment URL around the id) adds each one's messages. */
export function conversationExportStatement(
  accountId: number,
  f: ConversationFilter,
  sortKey: ConversationSortKey,
  dir: Direction,
  format: ExportFormat,
  messages: { prefix: string; suffix: string } | null,
): SQL {
  return sql`SELECT ${conversationLine(format, messages)} FROM conversations c ${CHANNEL_OF_CONVERSATION}
    WHERE ${conversationWhere(accountId, f)} ORDER BY ${totalOrder('c', CONVERSATION_SORT_COLUMNS[sortKey], dir).rows}`;
}

/**
 * A SQL string constant for any text: an escape string (E'…'), whose meaning does not depend on
 * `standard_conforming_strings`, with backslashes and quotes escaped. NUL cannot be in a text.
 */
export function quoteText(text: string): string {
  if (text.includes('\0')) throw new Error('a SQL text literal cannot hold NUL');
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * One bound value as a constant of unknown type (`'…'`), which PostgreSQL types from its context
 * exactly as it types the `$n` it replaces. Only the kinds the filters bind are accepted.
 */
function literalOf(value: unknown): string {
  if (typeof value === 'string') return quoteText(value);
  if (typeof value === 'number' && Number.isFinite(value)) return `'${String(value)}'`;
  if (typeof value === 'bigint') return `'${value.toString()}'`;
  if (Array.isArray(value) && value.every((v) => typeof v === 'number' && Number.isSafeInteger(v))) return `'{${value.join(',')}}'`;
  throw new Error(`cannot inline a bound value of type ${typeof value}`);
}

/**
 * The statement's text with its bound values inlined as quoted constants. COPY runs over the
 * simple query protocol, which takes no parameters, so user input (search text, ids, dates)
 * becomes escaped constants here, the only place that writes them. The statement text is built
 * from our constants; a `$` outside a placeholder would be a bug, so it is refused.
 */
export function inlineStatement(db: Db, statement: SQL): string {
  const { sql: text, params } = (db as unknown as { dialect: PgDialect }).dialect.sqlToQuery(statement);
  const used = new Set<number>();
  const out = text.replace(/\$(\d+)|\$/g, (m, n: string | undefined) => {
    if (n === undefined) throw new Error('a $ that is not a placeholder in an export statement');
    const i = Number(n) - 1;
    if (!(i >= 0 && i < params.length)) throw new Error(`placeholder ${m} has no value`);
    used.add(i);
    return literalOf(params[i]);
  });
  if (used.size !== params.length) throw new Error('an export statement has values it does not use');
  return out;
}

/** A running `COPY … TO STDOUT (FORMAT binary)` on PostgreSQL (postgres.js). */
export type CopyOut = {
  /** The COPY data (PostgreSQL's binary COPY format), in CopyData chunks; paused while unread. */
  stream: Readable;
  /** Rejects with the statement's error (also after the data began); never resolves. */
  failed: Promise<never>;
  /** Ends the statement early (a client that went away): cancels it, drains what is in flight, frees the connection. */
  cancel: () => Promise<void>;
};

type CopyQuery = PromiseLike<Readable> & {
  readable(): Promise<Readable>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  state?: { pid: number | null };
};
type Reserved = { unsafe: (q: string) => CopyQuery; release: () => void };

/**
 * Starts `COPY (<statement>) TO STDOUT (FORMAT binary)` on a connection reserved for it and
 * resolves once PostgreSQL began the COPY (an error before that — the database down, a bad
 * statement — rejects here, before any byte is answered). The connection is reserved (taken out
 * of the pool until the statement ends) because postgres.js otherwise queues other queries behind
 * a busy connection: they would wait for the export's reader. postgres.js pushes each CopyData
 * into `stream` and pauses the socket when the stream's buffer is full, so an unread export stops
 * PostgreSQL (it blocks on the full socket): memory stays flat whatever the client's pace.
 * Only for PostgreSQL (postgres.js).
 */
export async function startCopyOut(db: Db, statement: SQL, timeoutMs: number): Promise<CopyOut> {
  const client = (
    db as unknown as {
      session: {
        client: {
          reserve?: () => Promise<Reserved>;
          unsafe: (q: string, params: unknown[]) => Promise<unknown>;
        };
      };
    }
  ).session.client;
  if (!client.reserve) throw new Error('COPY TO STDOUT needs PostgreSQL (postgres.js)');
  const text = `COPY (${inlineStatement(db, statement)}) TO STDOUT (FORMAT binary)`;
  const reserved = await client.reserve();
  // The export's own statement_timeout, longer than the pool's; RESET gives the pool's back before release.
  try {
    await reserved.unsafe(`SET statement_timeout = ${Math.floor(timeoutMs)}`);
  } catch (e) {
    reserved.release();
    throw e;
  }
  const query = reserved.unsafe(text);
  // postgres.js resolves the query with the stream at CopyOutResponse, and calls resolve again at
  // the statement's end (ReadyForQuery) or reject on an error (the server's ErrorResponse, a lost
  // connection) even after the data began; neither settles it any more, so both are watched here.
  let fail!: (e: unknown) => void;
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let resolves = 0;
  const { resolve: originalResolve, reject: originalReject } = query;
  query.resolve = (v: unknown) => {
    originalResolve(v);
    if (++resolves === 2) finish();
  };
  query.reject = (e: unknown) => {
    originalReject(e);
    fail(e);
    finish();
  };
  // The connection goes back to the pool only once the statement is over (never mid-COPY).
  void finished
    .then(() =>
      reserved.unsafe('RESET statement_timeout').then(
        () => {},
        () => {},
      ),
    )
    .then(() => reserved.release());
  const stream = await query.readable();
  let ended = false;
  // postgres.js (3.4.9) pauses its socket when a CopyData push finds the stream full, and resumes
  // it only from the stream's read(); when the pause fell on the last rows, the stream ends
  // (CopyDone) with the socket still paused, so the statement's ReadyForQuery is never read and
  // the connection stays busy for good. Resume it at the end.
  const resumeSocket = () => (stream as unknown as { _read: (n: number) => void })._read(0);
  stream.once('end', () => {
    ended = true;
    resumeSocket();
  });
  failed.catch(() => {
    ended = true;
  });
  return {
    stream,
    failed,
    async cancel() {
      if (!ended) {
        // Keep reading (and dropping) what is in flight, or the paused socket never delivers the
        // cancellation's error and the connection stays busy.
        stream.removeAllListeners('readable');
        stream.on('data', () => {});
        stream.resume();
        // Cancelled by pid through the pool and awaited (postgres.js's own cancel() is not), so the
        // signal has reached the backend before its connection can serve anyone else; a backend
        // that already finished ignores it (a cancel that finds no command running is dropped).
        const pid = query.state?.pid;
        if (pid) await client.unsafe('SELECT pg_cancel_backend($1)', [pid]).catch(() => {});
      }
      await finished;
    },
  };
}
