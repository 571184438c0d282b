/**
 * The statement texts cached by shape (db/queries/prepared.ts preparedShape): for every shape of
 * the Customer API's list and by-id statements, the cached text with the values filled in is
 * exactly what drizzle renders for those values afresh. A shape key that missed something that
 * changes the text would hand one shape's text to another here. Without a database.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/client';
import {
  getConversationWithTranscript,
  listConversationsWithCount,
  CONVERSATION_SORT_COLUMNS,
  type ConversationFilter,
  type ConversationSortKey,
} from '../../db/queries/conversations';
import { getResponseById, listResponsesWithCount, RESPONSE_SORT_COLUMNS, type ResponseFilter, type ResponseSortKey } from '../../db/queries/responses';
import type { PageWindow } from '../../db/queries/shared';

type Sent = { text: string; params: unknown[] };
const dialect = new PgDialect();

/** A PostgreSQL-like handle (prepared path, cached texts) and a PGlite-like one (rendered afresh every call). */
function handles() {
  const sent: { cached?: Sent; fresh?: Sent } = {};
  const cached = {
    dialect,
    $client: {
      unsafe: async (text: string, params: unknown[]) => {
        sent.cached = { text, params };
        return [];
      },
    },
  } as unknown as Db;
  const fresh = {
    execute: async (q: SQL) => {
      const r = dialect.sqlToQuery(q);
      sent.fresh = { text: r.sql, params: r.params };
      return { rows: [] };
    },
  } as unknown as Db;
  return { sent, cached, fresh };
}

async function same(label: string, run: (db: Db) => Promise<unknown>) {
  const h = handles();
  await run(h.cached);
  await run(h.fresh);
  assert.deepEqual(h.sent.cached, h.sent.fresh, label);
}

const VALUES = [
  {
    account: 3,
    channels: [[7], [7, 8]],
    conversation: '11111111-1111-4111-8111-111111111111',
    since: '2026-01-02 03:04:05',
    query: 'a_b%',
    window: { limit: 15, offset: 0 },
  },
  {
    account: 9,
    channels: [[4], [5, 6, 7]],
    conversation: '22222222-2222-4222-8222-222222222222',
    since: '2025-12-31 23:59:59',
    query: 'zz',
    window: { limit: 100, offset: 300 },
  },
];
const bools = [false, true];

describe('preparedShape: cached statement texts', () => {
  it('every list shape: the cached text and filled values equal a fresh rendering (two value sets)', async () => {
    let checked = 0;
    for (const v of VALUES) {
      for (const sortKey of Object.keys(RESPONSE_SORT_COLUMNS) as ResponseSortKey[]) {
        for (const direction of ['ASC', 'DESC'] as const) {
          for (const channelIds of [[], ...v.channels]) {
            for (const [conv, since, query, paged] of bools.flatMap((a) => bools.flatMap((b) => bools.flatMap((c) => bools.map((d) => [a, b, c, d]))))) {
              const f: ResponseFilter = {
                channelIds,
                conversationId: conv ? v.conversation : undefined,
                updatedSince: since ? v.since : undefined,
                query: query ? v.query : undefined,
              };
              const w: PageWindow | null = paged ? { ...v.window, direction } : null;
              await same(`responses ${sortKey} ${JSON.stringify(f)} ${JSON.stringify(w)}`, (db) => listResponsesWithCount(db, v.account, f, sortKey, w));
              checked++;
            }
          }
        }
      }
      for (const sortKey of Object.keys(CONVERSATION_SORT_COLUMNS) as ConversationSortKey[]) {
        for (const direction of ['ASC', 'DESC'] as const) {
          for (const channelIds of [[], ...v.channels]) {
            for (const [since, query, paged] of bools.flatMap((a) => bools.flatMap((b) => bools.map((c) => [a, b, c])))) {
              const f: ConversationFilter = { channelIds, updatedSince: since ? v.since : undefined, query: query ? v.query : undefined };
              const w: PageWindow | null = paged ? { ...v.window, direction } : null;
              await same(`conversations ${sortKey} ${JSON.stringify(f)} ${JSON.stringify(w)}`, (db) =>
                listConversationsWithCount(db, v.account, f, sortKey, w),
              );
              checked++;
            }
          }
        }
      }
    }
    assert.ok(checked > 1000);
  });

  it('the by-id reads', async () => {
    for (const v of VALUES) {
      await same('response by id', (db) => getResponseById(db, v.account, v.conversation));
      await same('conversation with transcript', (db) => getConversationWithTranscript(db, v.account, v.conversation));
    }
  });
});
