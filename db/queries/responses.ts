import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { asValue, containsPattern, fromUtcText, isOneOf, totalOrder, utcText, type Bind, type PageWindow } from './shared';
import { pageWithTotal, preparedShape } from './prepared';
import { RESPONSE_SORT_COLUMNS, type ResponseSortKey } from './sort-keys';

export type ResponseRow = {
  id: string;
  conversation_id: string;
  channel_id: number;
  question: string;
  answer: string;
  likes: number;
  dislikes: number;
  comments: number;
  declined: boolean;
  created_at: string;
};

export { RESPONSE_SORT_COLUMNS, type ResponseSortKey };

/** `updatedSince`: UTC 'YYYY-MM-DD HH:MM:SS'; responses whose updated_at is at or after it. */
/** `status`/`handledBy`: of the response's conversation (docs/contracts.md §14); `declined`: the stored flag (§15). */
export type ResponseFilter = {
  channelIds: number[];
  conversationId?: string;
  query?: string;
  updatedSince?: string;
  status?: string;
  handledBy?: 'ai' | 'human';
  declined?: boolean;
};

const COLUMNS = sql`r.id, r.conversation_id, r.channel_id, r.question, r.answer, r.likes, r.dislikes,
  r.comments, r.declined, ${utcText(sql`r.created_at`)} AS created_at`;

/**
 * When a response last changed: `updated_at`, or `created_at` for rows older than that column
 * (never backfilled). The same expression as the index responses_account_changed_idx, so a
 * window is an index range scan.
 */
const RESPONSE_CHANGED_AT = sql`COALESCE(r.updated_at, r.created_at)`;

/** The filter's conditions; `bind`: see shared.ts Bind (what changes the text is in filterShape). */
export function whereOf(accountId: number, f: ResponseFilter, bind: Bind = asValue): SQL {
  const conds: SQL[] = [sql`r.account_id = ${bind('account', accountId)}`];
  if (f.channelIds.length > 0) conds.push(isOneOf(sql`r.channel_id`, f.channelIds, 'channels', bind));
  if (f.conversationId) conds.push(sql`r.conversation_id = ${bind('conversation', f.conversationId)}`);
  if (f.updatedSince) conds.push(sql`${RESPONSE_CHANGED_AT} >= ${fromUtcText(f.updatedSince, bind)}`);
  if (f.query) {
    const p = bind('pattern', containsPattern(f.query));
    conds.push(sql`(r.question ILIKE ${p} OR r.answer ILIKE ${p})`);
  }
  if (f.declined !== undefined) conds.push(f.declined ? sql`r.declined` : sql`NOT r.declined`);
  if (f.status !== undefined || f.handledBy) {
    const of: SQL[] = [sql`c.id = r.conversation_id`, sql`c.account_id = r.account_id`];
    if (f.status !== undefined) of.push(sql`c.status = ${bind('status', f.status)}`);
    if (f.handledBy) of.push(sql`c.handled_by = ${bind('handled_by', f.handledBy)}`);
    conds.push(sql`EXISTS (SELECT 1 FROM conversations c WHERE ${sql.join(of, sql` AND `)})`);
  }
  return sql.join(conds, sql` AND `);
}

/** What of a filter changes the statement text (never a value): which filters, one channel or several. */
function filterShape(f: ResponseFilter): string {
  return `${f.channelIds.length > 1 ? 'n' : f.channelIds.length}${f.conversationId ? 'c' : ''}${f.updatedSince ? 'u' : ''}${f.query ? 'q' : ''}${f.status !== undefined ? 's' : ''}${f.handledBy ? 'h' : ''}${f.declined === undefined ? '' : f.declined ? 'd' : 'a'}`;
}

/** A page of the account's responses (ties broken by id in the same direction) and the filter's exact total (prepared.ts pageWithTotal). */
export async function listResponsesWithCount(
  db: Db,
  accountId: number,
  f: ResponseFilter,
  sortKey: ResponseSortKey,
  w: PageWindow | null,
): Promise<{ count: number; rows: ResponseRow[] }> {
  const column = RESPONSE_SORT_COLUMNS[sortKey];
  return pageWithTotal<ResponseRow>(db, filterShape(f), w, {
    table: 'responses',
    alias: 'r',
    column,
    columns: COLUMNS,
    where: (bind) => whereOf(accountId, f, bind),
    count: (bind) => countSql(accountId, f, bind),
  });
}

/**
 * Exact total for a filter. Unfiltered, per-channel and per-conversation totals come from
 * counters kept exact by every writer, so page 1 costs no scan; only text search and
 * `updated_since` count rows (the latter on the responses_account_changed_idx index).
 */
function countSql(accountId: number, f: ResponseFilter, bind: Bind = asValue): SQL {
  if (f.query || f.updatedSince || f.status !== undefined || f.handledBy || f.declined !== undefined)
    return sql`SELECT count(*)::int AS n FROM responses r WHERE ${whereOf(accountId, f, bind)}`;
  const account = bind('account', accountId);
  if (f.conversationId) {
    const channelCond = f.channelIds.length > 0 ? sql` AND ${isOneOf(sql`channel_id`, f.channelIds, 'channels', bind)}` : sql``;
    return sql`SELECT COALESCE(SUM(response_count), 0)::int AS n FROM conversations
            WHERE id = ${bind('conversation', f.conversationId)} AND account_id = ${account}${channelCond}`;
  }
  if (f.channelIds.length > 0) {
    return sql`SELECT COALESCE(SUM(response_count), 0)::int AS n FROM channels
            WHERE account_id = ${account} AND ${isOneOf(sql`id`, f.channelIds, 'channels', bind)}`;
  }
  return sql`SELECT COALESCE(MAX(response_count), 0)::int AS n FROM accounts WHERE id = ${account}`;
}

export async function getResponseById(db: Db, accountId: number, responseId: string): Promise<ResponseRow | null> {
  const [row] = await preparedShape<ResponseRow>(
    db,
    'response-by-id',
    (bind) => sql`
    SELECT ${COLUMNS} FROM responses r WHERE r.id = ${bind('id', responseId)} AND r.account_id = ${bind('account', accountId)}`,
  );
  return row ?? null;
}

/** A response's first `limit` comments, oldest first (ties by id, so the order never changes between reads). */
export async function listResponseComments(db: Db, accountId: number, responseId: string, limit: number) {
  return rows<{ text: string; created_at: string }>(
    db,
    sql`
    SELECT c.body AS text, ${utcText(sql`c.created_at`)} AS created_at FROM response_comments c
    WHERE c.response_id = ${responseId} AND c.account_id = ${accountId} ORDER BY c.created_at ASC, c.id ASC LIMIT ${limit}`,
  );
}

export type AttachmentRow = { id: string; message_id: string | null; filename: string; content_type: string; size: number };

/** A conversation's attachments, oldest first; `messageIds`: only those of these messages (a page of the transcript). */
export async function listConversationAttachments(db: Db, accountId: number, conversationId: string, messageIds?: string[]): Promise<AttachmentRow[]> {
  const only = messageIds ? sql` AND message_id = ANY(${sql.param(messageIds)}::uuid[])` : sql``;
  return rows<AttachmentRow>(
    db,
    sql`
    SELECT id, message_id, filename, content_type, size FROM attachments
    WHERE conversation_id = ${conversationId} AND account_id = ${accountId}${only}
    ORDER BY created_at ASC, id ASC`,
  );
}

/** Where a keyset page starts: after the row with this sort key (as text) and id. */
export type KeysetAfter = { k: string; id: string };

/**
 * One keyset page of the export (docs/contracts.md §10): the list's filter (the same `whereOf`) and the
 * list's total order (sort column, then id, one direction), the rows strictly after `after`.
 * Never OFFSET: each page is an index range scan from the previous page's last (key, id). Run it
 * inside the export's snapshot transaction. `sort_k` is the raw key as text, for the next page.
 */
export async function listResponsesAfter(
  tx: Db,
  accountId: number,
  f: ResponseFilter,
  sortKey: ResponseSortKey,
  dir: 'ASC' | 'DESC',
  after: KeysetAfter | null,
  limit: number,
): Promise<Array<ResponseRow & { sort_k: string }>> {
  const order = totalOrder('r', RESPONSE_SORT_COLUMNS[sortKey], dir);
  const col = order.col;
  const from = after ? order.after(after.k, after.id) : sql``;
  return rows<ResponseRow & { sort_k: string }>(
    tx,
    sql`
    SELECT ${COLUMNS}, r.${col}::text AS sort_k FROM responses r
    WHERE ${whereOf(accountId, f)}${from}
    ORDER BY ${order.rows} LIMIT ${limit}`,
  );
}
