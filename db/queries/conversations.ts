import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { asValue, containsPattern, fromUtcText, isOneOf, preciseUtcText, totalOrder, utcText, type Bind, type PageWindow } from './shared';
import type { StoredMessageRow } from './handoff';
import { pageWithTotal, preparedShape } from './prepared';
import { CONVERSATION_SORT_COLUMNS, type ConversationSortKey } from './sort-keys';

export type ConversationRow = {
  id: string;
  title: string;
  status: string;
  response_count: number;
  channel_id: number;
  channel_name: string;
  account_id: number;
  created_at: string;
  updated_at: string;
  handled_by: 'ai' | 'human';
  assignee: string | null;
  waiting_since: string | null;
  resolved_at: string | null;
  csat: number | null;
};

export { CONVERSATION_SORT_COLUMNS, type ConversationSortKey };

/** `updatedSince`: UTC 'YYYY-MM-DD HH:MM:SS'; conversations whose updated_at is at or after it. */
/** `status` matches exactly (imported values too); `handledBy` ai or human. */
export type ConversationFilter = { channelIds: number[]; query?: string; updatedSince?: string; status?: string; handledBy?: 'ai' | 'human' };

/**
 * The one place a conversation meets its channel (docs/contracts.md §3: a channel is keyed by its account
 * and its id; when channels get per-account ids this join gains `AND ch.account_id = c.account_id`).
 */
export const CHANNEL_OF_CONVERSATION = sql`JOIN channels ch ON ch.account_id = c.account_id AND ch.id = c.channel_id`;

const COLUMNS = sql`c.id, c.title, c.status, c.response_count, c.channel_id, ch.name AS channel_name,
  c.account_id, ${utcText(sql`c.created_at`)} AS created_at, ${utcText(sql`c.updated_at`)} AS updated_at,
  c.handled_by, (SELECT au.email FROM admin_users au WHERE au.id = c.assignee_id) AS assignee,
  ${utcText(sql`c.waiting_since`)} AS waiting_since, ${utcText(sql`c.resolved_at`)} AS resolved_at, c.csat::int AS csat`;

/** The filter's conditions; `bind`: see shared.ts Bind (what changes the text is in filterShape). */
export function whereOf(accountId: number, f: ConversationFilter, bind: Bind = asValue): SQL {
  const account = bind('account', accountId);
  const conds: SQL[] = [sql`c.account_id = ${account}`];
  if (f.channelIds.length > 0) conds.push(isOneOf(sql`c.channel_id`, f.channelIds, 'channels', bind));
  if (f.updatedSince) conds.push(sql`c.updated_at >= ${fromUtcText(f.updatedSince, bind)}`);
  if (f.status !== undefined) conds.push(sql`c.status = ${bind('status', f.status)}`);
  if (f.handledBy) conds.push(sql`c.handled_by = ${bind('handled_by', f.handledBy)}`);
  if (f.query) {
    const p = bind('pattern', containsPattern(f.query));
    conds.push(sql`(c.title ILIKE ${p} OR c.channel_id IN (
      SELECT id FROM channels WHERE account_id = ${account} AND name ILIKE ${p}))`);
  }
  return sql.join(conds, sql` AND `);
}

/** What of a filter changes the statement text (never a value): which filters, one channel or several. */
function filterShape(f: ConversationFilter): string {
  return `${f.channelIds.length > 1 ? 'n' : f.channelIds.length}${f.updatedSince ? 'u' : ''}${f.query ? 'q' : ''}${f.status !== undefined ? 's' : ''}${f.handledBy ? 'h' : ''}`;
}

/** A page of the account's conversations (ties broken by id) and the filter's exact total (prepared.ts pageWithTotal). */
export async function listConversationsWithCount(
  db: Db,
  accountId: number,
  f: ConversationFilter,
  sortKey: ConversationSortKey,
  w: PageWindow | null,
): Promise<{ count: number; rows: ConversationRow[] }> {
  const column = CONVERSATION_SORT_COLUMNS[sortKey];
  return pageWithTotal<ConversationRow>(db, filterShape(f), w, {
    table: 'conversations',
    alias: 'c',
    column,
    columns: COLUMNS,
    join: sql` ${CHANNEL_OF_CONVERSATION}`,
    where: (bind) => whereOf(accountId, f, bind),
    count: (bind) => countSql(accountId, f, bind),
  });
}

function countSql(accountId: number, f: ConversationFilter, bind: Bind = asValue): SQL {
  // A sync window is counted row by row, on the (account_id, updated_at) index; a status on (account_id, status).
  if (f.updatedSince || f.status !== undefined || f.handledBy) return sql`SELECT count(*)::int AS n FROM conversations c WHERE ${whereOf(accountId, f, bind)}`;
  const account = bind('account', accountId);
  if (f.query) {
    // Conversations of channels whose NAME matches are counted from the exact channel counters;
    // only title matches elsewhere are counted row by row (on the title's trigram index).
    const p = bind('pattern', containsPattern(f.query));
    const inFilter = (column: SQL) => (f.channelIds.length > 0 ? sql` AND ${isOneOf(column, f.channelIds, 'channels', bind)}` : sql``);
    return sql`
      WITH m AS (SELECT id, conversation_count FROM channels WHERE account_id = ${account} AND name ILIKE ${p}${inFilter(sql`id`)})
      SELECT ((SELECT COALESCE(sum(conversation_count), 0) FROM m)
        + (SELECT count(*) FROM conversations c WHERE c.account_id = ${account} AND c.title ILIKE ${p}${inFilter(sql`c.channel_id`)}
             AND c.channel_id NOT IN (SELECT id FROM m)))::int AS n`;
  }
  if (f.channelIds.length > 0) {
    return sql`SELECT COALESCE(SUM(conversation_count), 0)::int AS n FROM channels
            WHERE account_id = ${account} AND ${isOneOf(sql`id`, f.channelIds, 'channels', bind)}`;
  }
  return sql`SELECT COALESCE(MAX(conversation_count), 0)::int AS n FROM accounts WHERE id = ${account}`;
}

export type ConversationWithTranscriptRow = ConversationRow & {
  transcript: Array<{
    id: string;
    question: string;
    answer: string;
    question_message_id: string;
    answer_message_id: string;
    created_at: string;
    sort_at: string;
  }>;
  attachments: Array<{ id: string; message_id: string | null; filename: string; content_type: string; size: number }>;
  /** The stored messages (conversation_messages), notes included: the Customer API's reader. */
  stored: Array<Omit<StoredMessageRow, 'client_message_id'>>;
};

/** A conversation's responses (oldest first), stored messages and attachments as JSON aggregates (alias `c`). */
const TRANSCRIPT_COLUMNS = sql`
      (SELECT COALESCE(json_agg(json_build_object(
          'id', r.id, 'question', r.question, 'answer', r.answer, 'question_message_id', r.question_message_id,
          'answer_message_id', r.answer_message_id, 'created_at', ${utcText(sql`r.created_at`)},
          'sort_at', ${preciseUtcText(sql`r.created_at`)}) ORDER BY r.created_at, r.id), '[]'::json)
        FROM responses r WHERE r.conversation_id = c.id AND r.account_id = c.account_id) AS transcript,
      (SELECT COALESCE(json_agg(json_build_object(
          'id', m.id, 'author', m.author, 'author_name', m.author_name, 'text', m.text,
          'created_at', ${utcText(sql`m.created_at`)}, 'sort_at', ${preciseUtcText(sql`m.created_at`)}, 'seq', m.seq) ORDER BY m.created_at, m.seq), '[]'::json)
        FROM conversation_messages m WHERE m.conversation_id = c.id AND m.account_id = c.account_id) AS stored,
      (SELECT COALESCE(json_agg(json_build_object(
          'id', a.id, 'message_id', a.message_id, 'filename', a.filename, 'content_type', a.content_type, 'size', a.size)
          ORDER BY a.created_at, a.id), '[]'::json)
        FROM attachments a WHERE a.conversation_id = c.id AND a.account_id = c.account_id) AS attachments`;

/** Without a json type parser (drizzle's PGlite path) the aggregates arrive as text. */
function parseAggregates(row: Partial<Pick<ConversationWithTranscriptRow, 'transcript' | 'attachments' | 'stored'>>): void {
  for (const k of ['transcript', 'attachments', 'stored'] as const) {
    if (typeof row[k] === 'string') (row as Record<string, unknown>)[k] = JSON.parse(row[k] as unknown as string);
  }
}

/**
 * The conversation, its responses (oldest first) and their attachments in ONE prepared
 * statement; null when the account has no such conversation.
 */
export async function getConversationWithTranscript(db: Db, accountId: number, conversationId: string): Promise<ConversationWithTranscriptRow | null> {
  const [row] = await preparedShape<ConversationWithTranscriptRow>(
    db,
    'conversation-with-transcript',
    (bind) => sql`
    SELECT ${COLUMNS}, ${TRANSCRIPT_COLUMNS}
    FROM conversations c ${CHANNEL_OF_CONVERSATION}
    WHERE c.id = ${bind('id', conversationId)} AND c.account_id = ${bind('account', accountId)}`,
  );
  if (!row) return null;
  parseAggregates(row);
  return row;
}

export async function getConversationById(db: Db, accountId: number, conversationId: string): Promise<ConversationRow | null> {
  const [row] = await rows<ConversationRow>(
    db,
    sql`
    SELECT ${COLUMNS} FROM conversations c ${CHANNEL_OF_CONVERSATION}
    WHERE c.id = ${conversationId} AND c.account_id = ${accountId}`,
  );
  return row ?? null;
}

export type ConversationExportRow = ConversationRow & { sort_k: string } & Partial<
    Pick<ConversationWithTranscriptRow, 'transcript' | 'attachments' | 'stored'>
  >;

/**
 * One keyset page of the conversation export (docs/contracts.md §10): the list's filter and total order,
 * the rows strictly after `after` (sort key as text, id); never OFFSET. `withMessages` adds each
 * conversation's transcript and attachments, read as `getConversationWithTranscript` reads them.
 * Run it inside the export's snapshot transaction.
 */
export async function listConversationsAfter(
  tx: Db,
  accountId: number,
  f: ConversationFilter,
  sortKey: ConversationSortKey,
  dir: 'ASC' | 'DESC',
  after: { k: string; id: string } | null,
  limit: number,
  withMessages: boolean,
): Promise<ConversationExportRow[]> {
  const order = totalOrder('c', CONVERSATION_SORT_COLUMNS[sortKey], dir);
  const col = order.col;
  const from = after ? order.after(after.k, after.id) : sql``;
  const result = await rows<ConversationExportRow>(
    tx,
    sql`
    SELECT ${COLUMNS}, c.${col}::text AS sort_k${withMessages ? sql`, ${TRANSCRIPT_COLUMNS}` : sql``}
    FROM conversations c ${CHANNEL_OF_CONVERSATION}
    WHERE ${whereOf(accountId, f)}${from}
    ORDER BY ${order.rows} LIMIT ${limit}`,
  );
  if (withMessages) for (const row of result) parseAggregates(row);
  return result;
}
