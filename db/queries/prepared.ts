import { is, Param, Placeholder, sql, type SQL } from 'drizzle-orm';
import type { PgDialect } from 'drizzle-orm/pg-core';
import { rows, type Db } from '../client';
import { asValue, totalOrder, type Bind, type PageWindow } from './shared';

type PostgresJsClient = { unsafe: (text: string, params: unknown[], opts: { prepare: boolean }) => Promise<unknown[]> };

function postgresJsClient(db: Db): PostgresJsClient | null {
  const client = (db as unknown as { $client?: Partial<PostgresJsClient> }).$client;
  return typeof client?.unsafe === 'function' ? (client as PostgresJsClient) : null;
}

/**
 * Runs a hot read as a prepared (named) statement where the driver has them: on PostgreSQL,
 * postgres.js prepares each distinct statement text once per connection and afterwards only
 * binds and executes it, so PostgreSQL neither parses nor plans it again. drizzle's `execute`
 * sends unnamed statements, hence this path for the Customer API's per-request queries. Callers
 * keep the statement text stable (parameters; id lists through shared.ts isOneOf), so the set of texts is small.
 * PGlite runs in-process and has no such cache: there the ordinary path is used.
 */
export async function preparedRows<T>(db: Db, query: SQL): Promise<T[]> {
  const client = postgresJsClient(db);
  if (!client) return rows<T>(db, query);
  const { sql: text, params } = (db as unknown as { dialect: PgDialect }).dialect.sqlToQuery(query);
  return (await client.unsafe(text, params, { prepare: true })) as T[];
}

/**
 * Statement texts by shape, per process: drizzle renders a statement's text once per shape instead
 * of on every request (~13 µs of a list request's CPU in a profile). A memo of what the code
 * builds, never data, so nothing any other instance has to agree on.
 */
const textsByShape = new Map<string, { sql: string; fill: Array<{ name: string; encode?: (v: unknown) => unknown }> }>();

/**
 * `preparedRows` for a statement whose text depends only on `shape`: `build` binds every value
 * through its `Bind`, so the text is rendered once per shape and later calls only fill in the
 * values. `shape` must name everything that changes the text (sort column, direction, which
 * filters are present, one id or several), never a value; tests/unit/prepared-shape.test.ts
 * checks that for the Customer API's statements.
 */
export async function preparedShape<T>(db: Db, shape: string, build: (bind: Bind) => SQL): Promise<T[]> {
  const client = postgresJsClient(db);
  if (!client) return rows<T>(db, build(asValue));
  const values: Record<string, unknown> = {};
  const query = build((name, value) => {
    values[name] = value;
    return sql.placeholder(name);
  });
  let statement = textsByShape.get(shape);
  if (!statement) {
    const { sql: text, params } = (db as unknown as { dialect: PgDialect }).dialect.sqlToQuery(query);
    // A value not bound through `bind` would be kept in the text's parameters for every later call.
    // What drizzle's fillPlaceholders would do with each parameter, worked out once per shape.
    const fill = params.map((p) => {
      if (is(p, Placeholder)) return { name: p.name };
      if (is(p, Param) && is(p.value, Placeholder)) {
        const param = p;
        return { name: p.value.name, encode: (v: unknown) => param.encoder.mapToDriverValue(v) };
      }
      throw new Error(`statement ${shape}: every value must be bound through its Bind`);
    });
    statement = { sql: text, fill };
    textsByShape.set(shape, statement);
  }
  const filled = statement.fill.map(({ name, encode }) => {
    if (!(name in values)) throw new Error(`No value for placeholder "${name}" was provided`);
    return encode ? encode(values[name]) : values[name];
  });
  return (await client.unsafe(statement.sql, filled, { prepare: true })) as T[];
}

/**
 * A page of a list in its total order AND the filter's exact total, in ONE prepared statement (one
 * round trip). The page's ids are found first, on an index where possible, and only those rows
 * are read. `w` null: a page past any table, for which only the total is read. `filterShape` is
 * what of the list's filter changes the statement's text; with the table, the sort column and the
 * direction it names the statement.
 */
export async function pageWithTotal<R extends { id: string }>(
  db: Db,
  filterShape: string,
  w: PageWindow | null,
  list: {
    table: 'responses' | 'conversations';
    alias: 'r' | 'c';
    column: string;
    columns: SQL;
    join?: SQL;
    where: (bind: Bind) => SQL;
    count: (bind: Bind) => SQL;
  },
): Promise<{ count: number; rows: R[] }> {
  const order = totalOrder(list.alias, list.column, w?.direction ?? 'DESC');
  const t = sql.raw(list.table);
  const a = sql.raw(list.alias);
  const result = await preparedShape<R & { total: number }>(
    db,
    `${list.table}:${list.column}:${w?.direction ?? 'DESC'}:${filterShape}`,
    (bind) => sql`
    SELECT t.n AS total, pg.* FROM (${list.count(bind)}) t
    LEFT JOIN (
      SELECT ${list.columns}, p.k AS sort_k FROM (
        SELECT ${a}.id, ${a}.${order.col} AS k FROM ${t} ${a} WHERE ${list.where(bind)}
        ORDER BY ${order.rows} LIMIT ${bind('limit', w?.limit ?? 0)} OFFSET ${bind('offset', w?.offset ?? 0)}
      ) p JOIN ${t} ${a} ON ${a}.id = p.id${list.join ?? sql``}
    ) pg ON true
    ORDER BY ${order.page}`,
  );
  return { count: Number(result[0]?.total ?? 0), rows: result.filter((r) => r.id !== null) };
}
