import { sql, type SQL } from 'drizzle-orm';

export type Direction = 'ASC' | 'DESC';
export type PageWindow = { limit: number; offset: number; direction: Direction };

/** LIKE pattern for a literal, case-insensitive substring: %, _ and \ in the input match themselves. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function inList(values: number[]): SQL {
  return sql.join(values.map((v) => sql`${v}`), sql`, `);
}

/** `= ANY($n::int[])`: one parameter for any number of ids, so the statement text stays the same. */
export function anyOf(values: number[]): SQL {
  return sql`ANY(${sql.param(values)}::int[])`;
}

export function direction(d: Direction): SQL {
  return d === 'ASC' ? sql.raw('ASC') : sql.raw('DESC');
}

/** 'YYYY-MM-DD HH:MM:SS' in UTC, the one timestamp format of the API. */
export function utcText(column: SQL): SQL {
  return sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;
}

/** The instant an API timestamp text ('YYYY-MM-DD HH:MM:SS', UTC) names, as a timestamptz. */
export function fromUtcText(text: string): SQL {
  return sql`(${text}::timestamp AT TIME ZONE 'UTC')`;
}
