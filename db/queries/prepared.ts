import type { SQL } from 'drizzle-orm';
import type { PgDialect } from 'drizzle-orm/pg-core';
import { rows, type Db } from '../client';

type PostgresJsClient = { unsafe: (text: string, params: unknown[], opts: { prepare: boolean }) => Promise<unknown[]> };

/**
 * Runs a hot read as a prepared (named) statement where the driver has them: on PostgreSQL,
 * postgres.js prepares each distinct statement text once per connection and afterwards only
 * binds and executes it, so PostgreSQL neither parses nor plans it again. drizzle's `execute`
 * sends unnamed statements, hence this path for the Customer API's per-request queries. Callers
 * keep the statement text stable (parameters; id lists through shared.ts isOneOf), so the set of texts is small.
 * PGlite runs in-process and has no such cache: there the ordinary path is used.
 */
export async function preparedRows<T>(db: Db, query: SQL): Promise<T[]> {
  const client = (db as unknown as { $client?: Partial<PostgresJsClient> }).$client;
  if (typeof client?.unsafe !== 'function') return rows<T>(db, query);
  const { sql: text, params } = (db as unknown as { dialect: PgDialect }).dialect.sqlToQuery(query);
  return (await client.unsafe(text, params, { prepare: true })) as T[];
}
