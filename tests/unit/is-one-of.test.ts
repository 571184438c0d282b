/** The id-list condition of the list filters (db/queries/shared.ts isOneOf), without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { isOneOf } from '../../db/queries/shared';

const query = (ids: number[]) => {
  const { sql: text, params } = new PgDialect().sqlToQuery(isOneOf(sql`r.channel_id`, ids, 'channels'));
  return { text, params };
};

describe('isOneOf', () => {
  it('one id is a plain equality (PostgreSQL 15 can then read (channel_id, created_at, id) in order)', () => {
    assert.deepEqual(query([7]), { text: 'r.channel_id = $1', params: [7] });
  });
  it('several ids are one array parameter, so the text is the same for any count', () => {
    assert.deepEqual(query([7, 8]), { text: 'r.channel_id = ANY($1::int[])', params: [[7, 8]] });
    assert.deepEqual(query([1, 2, 3]), { text: 'r.channel_id = ANY($1::int[])', params: [[1, 2, 3]] });
  });
});
