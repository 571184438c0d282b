import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { containsPattern, direction, inList, utcText, type PageWindow } from './shared';

export type ConversationRow = {
  id: string; title: string; status: string; response_count: number; channel_id: number;
  channel_name: string; account_id: number; created_at: string; updated_at: string;
};

export const CONVERSATION_SORT_COLUMNS = {
  created_at: 'created_at', conversation_id: 'id', id: 'id', channel_id: 'channel_id',
  updated_at: 'updated_at', response_count: 'response_count',
} as const;
export type ConversationSortKey = keyof typeof CONVERSATION_SORT_COLUMNS;

export type ConversationFilter = { channelIds: number[]; query?: string };

const COLUMNS = sql`c.id, c.title, c.status, c.response_count, c.channel_id, ch.name AS channel_name,
  c.account_id, ${utcText(sql`c.created_at`)} AS created_at, ${utcText(sql`c.updated_at`)} AS updated_at`;

function whereOf(accountId: number, f: ConversationFilter): SQL {
  const conds: SQL[] = [sql`c.account_id = ${accountId}`];
  if (f.channelIds.length > 0) conds.push(sql`c.channel_id IN (${inList(f.channelIds)})`);
  if (f.query) {
    const p = containsPattern(f.query);
    conds.push(sql`(c.title ILIKE ${p} OR c.channel_id IN (
      SELECT id FROM channels WHERE account_id = ${accountId} AND name ILIKE ${p}))`);
  }
  return sql.join(conds, sql` AND `);
}

/** A page of the account's conversations in a total order (ties broken by id). */
export async function listConversations(db: Db, accountId: number, f: ConversationFilter, sortKey: ConversationSortKey, w: PageWindow): Promise<ConversationRow[]> {
  const colName = CONVERSATION_SORT_COLUMNS[sortKey];
  const col = sql.raw(colName);
  const dir = direction(w.direction);
  const order = colName === 'id' ? sql`p.id ${dir}` : sql`p.k ${dir}, p.id ${dir}`;
  const innerOrder = colName === 'id' ? sql`c.id ${dir}` : sql`c.${col} ${dir}, c.id ${dir}`;
  return rows<ConversationRow>(db, sql`
    SELECT ${COLUMNS} FROM (
      SELECT c.id, c.${col} AS k FROM conversations c WHERE ${whereOf(accountId, f)}
      ORDER BY ${innerOrder} LIMIT ${w.limit} OFFSET ${w.offset}
    ) p JOIN conversations c ON c.id = p.id JOIN channels ch ON ch.account_id = c.account_id AND ch.id = c.channel_id
    ORDER BY ${order}`);
}

export async function countConversations(db: Db, accountId: number, f: ConversationFilter): Promise<number> {
  let q: SQL;
  if (f.query) {
    // Conversations of channels whose NAME matches are counted from the exact channel counters;
    // only title matches elsewhere are counted row by row (on the title's trigram index).
    const p = containsPattern(f.query);
    const inFilter = (col: SQL) => (f.channelIds.length > 0 ? sql` AND ${col} IN (${inList(f.channelIds)})` : sql``);
    q = sql`
      WITH m AS (SELECT id, conversation_count FROM channels WHERE account_id = ${accountId} AND name ILIKE ${p}${inFilter(sql`id`)})
      SELECT ((SELECT COALESCE(sum(conversation_count), 0) FROM m)
        + (SELECT count(*) FROM conversations c WHERE c.account_id = ${accountId} AND c.title ILIKE ${p}${inFilter(sql`c.channel_id`)}
             AND c.channel_id NOT IN (SELECT id FROM m)))::int AS n`;
  } else if (f.channelIds.length > 0) {
    q = sql`SELECT COALESCE(SUM(conversation_count), 0)::int AS n FROM channels
            WHERE account_id = ${accountId} AND id IN (${inList(f.channelIds)})`;
  } else {
    q = sql`SELECT conversation_count AS n FROM accounts WHERE id = ${accountId}`;
  }
  const [row] = await rows<{ n: number }>(db, q);
  return row?.n ?? 0;
}

export async function getConversationById(db: Db, accountId: number, conversationId: string): Promise<ConversationRow | null> {
  const [row] = await rows<ConversationRow>(db, sql`
    SELECT ${COLUMNS} FROM conversations c JOIN channels ch ON ch.account_id = c.account_id AND ch.id = c.channel_id
    WHERE c.id = ${conversationId} AND c.account_id = ${accountId}`);
  return row ?? null;
}
