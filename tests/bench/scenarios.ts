/**
 * The benchmark scenarios: each is one Customer API request and the same query functions the
 * API's service layer calls for it (db/queries/*), run directly through the driver.
 *
 * Import this module only after DATABASE_URL / DATA_DIR is set: it loads db/client.
 */
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { rows, type Db } from '../../db/client';
import { pingDatabase } from '../../db/queries/health';
import { getConversationWithTranscript, listConversationsWithCount } from '../../db/queries/conversations';
import { getResponseById, listResponsesWithCount } from '../../db/queries/responses';
import { COMMON_TERM, CONVERSATION_TERM, RARE_TERM } from './dataset';

/** Ids and values the scenarios use, looked up once in the benchmark database. */
export type Picks = {
  accountId: number;
  totalResponses: number;
  channelId: number;
  channelResponses: number;
  largeConversationId: string;
  largeConversationResponses: number;
  /** Rotated through by the get-by-id scenarios (a different id per request). */
  responseIds: string[];
  conversationIds: string[];
  conversationIdsResponses: number;
};

export type TargetKind = 'list' | 'filter' | 'deep' | 'rare' | 'common' | 'byid' | 'floor';
export const TARGETS: Record<TargetKind, { p50?: number; rps?: number; label: string }> = {
  floor: { label: '– (reference: a Next route, no auth; svc pings no PostgreSQL here, the floor runs SELECT 1)' },
  list: { p50: 2, rps: 1200, label: 'p50 ≤ 2 ms, ≥ 1,200 req/s' },
  filter: { p50: 3, label: 'p50 ≤ 3 ms' },
  deep: { p50: 60, label: 'p50 ≤ 60 ms' },
  rare: { p50: 10, label: 'p50 ≤ 10 ms' },
  common: { p50: 80, label: 'p50 ≤ 80 ms' },
  byid: { p50: 1, label: 'p50 ≤ 1 ms' },
};

export type Scenario = {
  id: string;
  name: string;
  target: TargetKind;
  /** HTTP path and query of the i-th request. */
  path: (i: number) => string;
  /** The SQL the API runs for the i-th request, through the query functions; returns the total or row count. */
  direct: (db: Db, i: number) => Promise<number>;
};

const R = '/customer-api/v2/response';
const C = '/customer-api/v2/conversation';
const none = { channelIds: [] as number[] };

/** Page + exact total in one statement, as lib/responses/service.ts does. */
async function responsesPage(
  db: Db,
  accountId: number,
  f: Parameters<typeof listResponsesWithCount>[2],
  sort: Parameters<typeof listResponsesWithCount>[3],
  limit: number,
  page = 1,
): Promise<number> {
  return (await listResponsesWithCount(db, accountId, f, sort, { limit, offset: (page - 1) * limit, direction: 'DESC' })).count;
}

async function conversationsPage(
  db: Db,
  accountId: number,
  f: Parameters<typeof listConversationsWithCount>[2],
  sort: Parameters<typeof listConversationsWithCount>[3],
  limit: number,
): Promise<number> {
  return (await listConversationsWithCount(db, accountId, f, sort, { limit, offset: 0, direction: 'DESC' })).count;
}

/** Page number whose offset is ~500,000 at 1M responses, and half the data on smaller sets. */
export function deepPage(totalResponses: number, perPage = 15): number {
  const offset = Math.min(500_000, Math.floor(totalResponses / 2));
  return Math.floor(offset / perPage) + 1;
}

export function buildScenarios(p: Picks): Scenario[] {
  const a = p.accountId;
  const deep = deepPage(p.totalResponses);
  const cycle = <T>(list: T[], i: number) => list[i % list.length]!;
  return [
    {
      id: 'healthz',
      name: 'GET /healthz (reference)',
      target: 'floor',
      path: () => '/healthz',
      direct: async (db) => {
        await pingDatabase(db);
        return 1;
      },
    },
    {
      id: 'list15',
      name: 'list page 1 (15/page)',
      target: 'list',
      path: () => `${R}?resultsPerPage=15`,
      direct: (db) => responsesPage(db, a, none, 'created_at', 15),
    },
    {
      id: 'list100',
      name: 'list page 1 (100/page)',
      target: 'list',
      path: () => `${R}?resultsPerPage=100`,
      direct: (db) => responsesPage(db, a, none, 'created_at', 100),
    },
    {
      id: 'channel',
      name: `channel filter (${p.channelResponses.toLocaleString('en-US')} rows)`,
      target: 'filter',
      path: () => `${R}?channel_id=${p.channelId}`,
      direct: (db) => responsesPage(db, a, { channelIds: [p.channelId] }, 'created_at', 15),
    },
    {
      id: 'conversation',
      name: `conversation filter (${p.largeConversationResponses.toLocaleString('en-US')} rows)`,
      target: 'filter',
      path: () => `${R}?conversation_id=${p.largeConversationId}`,
      direct: (db) => responsesPage(db, a, { channelIds: [], conversationId: p.largeConversationId }, 'created_at', 15),
    },
    {
      id: 'rare',
      name: `query rare term "${RARE_TERM}"`,
      target: 'rare',
      path: () => `${R}?query=${RARE_TERM}`,
      direct: (db) => responsesPage(db, a, { channelIds: [], query: RARE_TERM }, 'created_at', 15),
    },
    {
      id: 'common',
      name: `query ~1% term "${COMMON_TERM}"`,
      target: 'common',
      path: () => `${R}?query=${COMMON_TERM}`,
      direct: (db) => responsesPage(db, a, { channelIds: [], query: COMMON_TERM }, 'created_at', 15),
    },
    {
      id: 'deep',
      name: `deep page (page=${deep}, offset ${((deep - 1) * 15).toLocaleString('en-US')})`,
      target: 'deep',
      path: () => `${R}?page=${deep}&resultsPerPage=15`,
      direct: (db) => responsesPage(db, a, none, 'created_at', 15, deep),
    },
    { id: 'likes', name: 'sort by likes', target: 'filter', path: () => `${R}?order_by=likes`, direct: (db) => responsesPage(db, a, none, 'likes', 15) },
    {
      id: 'convcount',
      name: 'conversations by response_count',
      target: 'filter',
      path: () => `${C}?order_by=response_count`,
      direct: (db) => conversationsPage(db, a, none, 'response_count', 15),
    },
    {
      id: 'convquery',
      name: `conversation query "${CONVERSATION_TERM}" (title/channel)`,
      target: 'common',
      path: () => `${C}?query=${CONVERSATION_TERM}`,
      direct: (db) => conversationsPage(db, a, { channelIds: [], query: CONVERSATION_TERM }, 'created_at', 15),
    },
    {
      id: 'getresponse',
      name: 'get response by id',
      target: 'byid',
      path: (i) => `${R}/${cycle(p.responseIds, i)}`,
      direct: async (db, i) => ((await getResponseById(db, a, cycle(p.responseIds, i))) ? 1 : 0),
    },
    {
      id: 'getconversation',
      name: `get conversation by id (${p.conversationIdsResponses} responses)`,
      target: 'byid',
      path: (i) => `${C}/${cycle(p.conversationIds, i)}`,
      direct: async (db, i) => {
        // As lib/conversations/service.ts: record, transcript and attachments in one statement.
        return (await getConversationWithTranscript(db, a, cycle(p.conversationIds, i))) ? 1 : 0;
      },
    },
  ];
}

/** Looks up the scenario parameters in a freshly imported benchmark database (deterministic). */
export async function lookupPicks(db: Db, accountId: number, idsWanted = 400): Promise<Picks> {
  const [acc] = await rows<{ n: number }>(db, sql`SELECT response_count AS n FROM accounts WHERE id = ${accountId}`);
  const channels = await rows<{ id: number; n: number }>(
    db,
    sql`
    SELECT id, response_count AS n FROM channels WHERE account_id = ${accountId} ORDER BY response_count DESC, id`,
  );
  const channel = channels[Math.floor(channels.length / 2)] ?? channels[0];
  const [large] = await rows<{ id: string; n: number }>(
    db,
    sql`
    SELECT id, response_count AS n FROM conversations WHERE account_id = ${accountId}
    ORDER BY response_count DESC, id LIMIT 1`,
  );
  // Conversations of about ten responses (twenty messages), spread over the id space.
  const convs = await rows<{ id: string; n: number }>(
    db,
    sql`
    SELECT id, response_count AS n FROM conversations
    WHERE account_id = ${accountId} AND response_count = (
      SELECT response_count FROM conversations WHERE account_id = ${accountId}
      ORDER BY abs(response_count - 10), response_count LIMIT 1)
    ORDER BY md5(id::text) LIMIT ${idsWanted}`,
  );
  const resp = await rows<{ id: string }>(
    db,
    sql`
    SELECT id FROM responses WHERE account_id = ${accountId} ORDER BY md5(id::text) LIMIT ${idsWanted}`,
  );
  if (!acc || !channel || !large || convs.length === 0 || resp.length === 0) throw new Error(`account ${accountId} has no benchmark data`);
  return {
    accountId,
    totalResponses: acc.n,
    channelId: channel.id,
    channelResponses: channel.n,
    largeConversationId: large.id,
    largeConversationResponses: large.n,
    responseIds: resp.map((r) => r.id),
    conversationIds: convs.map((c) => c.id),
    conversationIdsResponses: convs[0]!.n,
  };
}

/**
 * A Db whose execute() first runs EXPLAIN (ANALYZE, BUFFERS) of each statement and keeps the plan
 * text (the exact statements and parameters the query functions build), then runs the statement.
 */
export function explainingDb(db: Db, out: string[]): Db {
  return {
    execute: async (query: Parameters<Db['execute']>[0]) => {
      const plan = await rows<{ 'QUERY PLAN': string }>(db, sql`EXPLAIN (ANALYZE, BUFFERS) ${query}`);
      const stmt = new PgDialect().sqlToQuery(query as Parameters<PgDialect['sqlToQuery']>[0]);
      out.push(`-- ${stmt.sql.replace(/\s+/g, ' ').trim()}\n-- params: ${JSON.stringify(stmt.params)}\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`);
      // The real rows too: callers decide on them (e.g. the transcript only after the record is found).
      return db.execute(query);
    },
  } as unknown as Db;
}

export type DirectResult = { id: string; p50: number; p99: number; runs: number; count: number };

/** c=1 timings of each scenario's SQL through the driver (p50 over `runs` after `warmup`). */
export async function measureDirect(db: Db, scenarios: Scenario[], warmup: number, runs: number, log: (m: string) => void = () => {}): Promise<DirectResult[]> {
  const { sequential } = await import('./stats');
  const out: DirectResult[] = [];
  for (const s of scenarios) {
    const count = await s.direct(db, 0);
    const stats = await sequential((i) => s.direct(db, i), warmup, runs);
    log(`  sql   ${s.name}: p50 ${stats.p50.toFixed(2)} ms, p99 ${stats.p99.toFixed(2)} ms`);
    out.push({ id: s.id, p50: stats.p50, p99: stats.p99, runs: stats.runs, count });
  }
  return out;
}
