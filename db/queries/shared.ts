import { sql, type SQL } from 'drizzle-orm';

export type Direction = 'ASC' | 'DESC';
export type PageWindow = { limit: number; offset: number; direction: Direction };

/**
 * How a statement builder puts a value into its text: `asValue` binds the value itself; in
 * prepared.ts `preparedShape` it becomes a placeholder of that name, filled per call. A name
 * stands for one value of the statement (it may appear several times).
 */
export type Bind = (name: string, value: unknown) => unknown;
export const asValue: Bind = (_name, value) => value;

/** LIKE pattern for a literal, case-insensitive substring: %, _ and \ in the input match themselves. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * `column` is one of the ids: `column = $n` for exactly one id, `column = ANY($n::int[])` (one
 * parameter for any number, so the text stays the same) for several. The single id is an equality
 * on purpose: on PostgreSQL 15 `= ANY` on an index column cannot return rows in the index's order,
 * so a one-channel page by created_at walked the account's newest rows and dropped the other
 * channels' (1,880 index entries for 15 rows at 1M) instead of reading 15 off (channel_id,
 * created_at, id). Two statement texts per shape, not one per count. `name`/`bind`: see Bind.
 */
export function isOneOf(column: SQL, values: number[], name: string, bind: Bind = asValue): SQL {
  return values.length === 1 ? sql`${column} = ${bind(name, values[0])}` : sql`${column} = ANY(${sql.param(bind(name, values))}::int[])`;
}

export function direction(d: Direction): SQL {
  return d === 'ASC' ? sql.raw('ASC') : sql.raw('DESC');
}

/**
 * A list's total order: the sort column, then the id, one direction (the id alone when sorting by
 * id). `rows` orders rows of `alias`; `page` the outer select of a page (its `sort_k` and `id`);
 * `after` is the keyset condition for rows strictly after a (key as text, id) pair.
 */
export function totalOrder(alias: 'r' | 'c', colName: string, dir: Direction) {
  const a = sql.raw(alias);
  const col = sql.raw(colName);
  const d = direction(dir);
  const byId = colName === 'id';
  const cmp = sql.raw(dir === 'ASC' ? '>' : '<');
  return {
    col,
    rows: byId ? sql`${a}.id ${d}` : sql`${a}.${col} ${d}, ${a}.id ${d}`,
    page: byId ? sql`pg.id ${d}` : sql`pg.sort_k ${d}, pg.id ${d}`,
    after: (k: string, id: string): SQL => (byId ? sql` AND ${a}.id ${cmp} ${id}` : sql` AND (${a}.${col}, ${a}.id) ${cmp} (${k}, ${id})`),
  };
}

/** 'YYYY-MM-DD HH:MM:SS' in UTC, the one timestamp format of the API. */
export function utcText(column: SQL): SQL {
  return sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;
}

/** UTC with microseconds, 'YYYY-MM-DD HH:MM:SS.UUUUUU': sorts as text exactly as the instants sort (merging two sources). */
export function preciseUtcText(column: SQL): SQL {
  return sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`;
}

/** The instant an API timestamp text ('YYYY-MM-DD HH:MM:SS', UTC) names, as a timestamptz. */
export function fromUtcText(text: string, bind: Bind = asValue): SQL {
  return sql`(${bind('since', text)}::timestamp AT TIME ZONE 'UTC')`;
}
