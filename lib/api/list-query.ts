import { z } from 'zod';
import { AppError } from '../core/errors';
import {
  channelIdParam,
  declinedParam,
  formatParam,
  handledByParam,
  intParam,
  pageParam,
  queryParam,
  sortParam,
  statusParam,
  updatedSinceParam,
  uuidParam,
} from './params';
import { describeIssues, issueParams } from '../zod-issues';

/** A name the API accepts and the canonical name it stands for (docs/contracts.md §4: canonical wins). */
export const ALIASES: Record<string, string> = { resultsPerPage: 'pageSize', order_by: 'sortBy', sort: 'sortOrder' };
export const CHANNEL_IDS = 'channel_ids[]';

export type ListQuery<K extends string> = {
  page: bigint;
  resultsPerPage: number;
  order_by?: K;
  sort?: 'ASC' | 'DESC';
  channel_id?: number;
  [CHANNEL_IDS]?: number[];
  conversation_id?: string;
  query?: string;
  /** UTC 'YYYY-MM-DD HH:MM:SS': records with updated_at at or after it. */
  updated_since?: string;
  /** The conversation's status, matched exactly (imported values too); for responses, their conversation's. */
  status?: string;
  handled_by?: 'ai' | 'human';
  /** Responses only: the stored declined flag. */
  declined?: 'true' | 'false';
  format?: 'gridjs';
};

/** The query schema of a list operation: validation, types and the OpenAPI parameters at once. */
export function listQuerySchema<K extends string>(sortKeys: readonly [K, ...K[]], withConversationFilter: boolean) {
  const shape = {
    page: pageParam.optional(),
    resultsPerPage: intParam(1, 100, 'Records per page (default 15); alias pageSize').optional(),
    order_by: z
      .enum(sortKeys, { error: `must be one of ${sortKeys.join(', ')}` })
      .meta({ description: 'Field to sort by (default created_at); alias sortBy' })
      .optional(),
    sort: sortParam.optional(),
    channel_id: channelIdParam.optional(),
    [CHANNEL_IDS]: z.array(channelIdParam).meta({ description: 'Repeat for several channels; union with channel_id' }).optional(),
    query: queryParam.optional(),
    updated_since: updatedSinceParam.optional(),
    status: statusParam(
      withConversationFilter
        ? 'Only responses of conversations with this status (exact: Open, Waiting, Snoozed, Resolved or an imported value)'
        : 'Only conversations with this status (exact: Open, Waiting, Snoozed, Resolved or an imported value)',
    ).optional(),
    handled_by: handledByParam(
      withConversationFilter ? 'Only responses of conversations handled by the AI or a person' : 'Only conversations handled by the AI or a person',
    ).optional(),
    format: formatParam.optional(),
    ...(withConversationFilter ? { conversation_id: uuidParam('Only responses of this conversation').optional(), declined: declinedParam.optional() } : {}),
  };
  return z.object(shape);
}

export type ParsedList<K extends string> = { query: ListQuery<K>; channelIds: number[] };

/** Each parameter of a list schema with the names it is read under (canonical first), worked out once per schema. */
const namesBySchema = new WeakMap<object, Array<[string, string[]]>>();
function namesOf(schema: z.ZodObject): Array<[string, string[]]> {
  let names = namesBySchema.get(schema);
  if (!names) {
    names = Object.keys(schema.shape).map((name) => [name, [name, ALIASES[name]].filter((n): n is string => !!n)]);
    namesBySchema.set(schema, names);
  }
  return names;
}

/**
 * Reads a list operation's parameters from the query string: first value of a repeated name,
 * empty values as absent, canonical names over aliases, and one 400 listing every bad parameter.
 */
export function parseListQuery<K extends string>(params: URLSearchParams, schema: ReturnType<typeof listQuerySchema<K>>): ParsedList<K> {
  const raw: Record<string, unknown> = {};
  const given: Record<string, string> = {};
  for (const [name, candidates] of namesOf(schema)) {
    if (name === CHANNEL_IDS) {
      const all = params.getAll(CHANNEL_IDS).filter((v) => v !== '');
      if (all.length > 0) {
        raw[name] = all;
        given[name] = CHANNEL_IDS;
      }
      continue;
    }
    for (const candidate of candidates) {
      const value = params.getAll(candidate).find((v) => v !== '');
      if (value !== undefined) {
        raw[name] = value;
        given[name] = candidate;
        break;
      }
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const errors = issueParams(parsed.error, { names: given, fallback: '' });
    throw new AppError('invalid_parameters', describeIssues(errors), { errors });
  }
  const data = parsed.data as Omit<ListQuery<K>, 'page' | 'resultsPerPage'> & { page?: bigint; resultsPerPage?: number };
  const query: ListQuery<K> = { ...data, page: data.page ?? 1n, resultsPerPage: data.resultsPerPage ?? 15 };
  const channelIds = [...new Set([...(query.channel_id ? [query.channel_id] : []), ...(query[CHANNEL_IDS] ?? [])])];
  return { query, channelIds };
}

/** Single-record reads accept only format=gridjs (first non-empty value, like the lists). */
export function parseSingleQuery(params: URLSearchParams): { format?: 'gridjs' } {
  const value = params.getAll('format').find((v) => v !== '');
  if (value === undefined) return {};
  const parsed = formatParam.safeParse(value);
  if (!parsed.success) {
    const errors = issueParams(parsed.error, { fallback: 'format' }).slice(0, 1);
    throw new AppError('invalid_parameters', describeIssues(errors), { errors });
  }
  return { format: parsed.data };
}

/** Canonical order of parameters in next/previous links. */
const LINK_ORDER = [
  'order_by',
  'sort',
  'channel_id',
  CHANNEL_IDS,
  'conversation_id',
  'query',
  'updated_since',
  'status',
  'handled_by',
  'declined',
  'format',
] as const;

export function pageLink(basePath: string, q: ListQuery<string>, page: bigint): string {
  const out = new URLSearchParams();
  out.set('page', String(page));
  out.set('resultsPerPage', String(q.resultsPerPage));
  for (const name of LINK_ORDER) {
    const value = q[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, String(v));
    else out.set(name, String(value));
  }
  return `${basePath}?${out.toString()}`;
}

export type Envelope<T> = { count: number; next: string | null; previous: string | null; results: T[] };

/** The page envelope of a list operation, as a schema (validation of tests, OpenAPI). */
export function envelopeSchema(item: z.ZodType, id: string) {
  return z
    .object({
      count: z.int().min(0).meta({ description: 'Total number of matching records' }),
      next: z.string().nullable().meta({ description: 'Relative link to the next page, or null' }),
      previous: z.string().nullable().meta({ description: 'Relative link to the previous page, or null' }),
      results: z.array(item),
    })
    .meta({ id });
}

/** The format=gridjs form of a record schema: the same keys, every value a string or a number. */
export function gridjsSchema<T extends z.ZodRawShape>(record: z.ZodObject<T>, id: string) {
  const cell = z.union([z.string(), z.number()]);
  const shape = Object.fromEntries(Object.keys(record.shape).map((k) => [k, cell])) as { [K in keyof T]: typeof cell };
  return z.object(shape).meta({ id, description: 'format=gridjs: the same keys, every value a string or a number' });
}

export function envelope<T>(basePath: string, q: ListQuery<string>, count: number, results: T[]): Envelope<T> {
  const hasNext = q.page * BigInt(q.resultsPerPage) < BigInt(count);
  return {
    count,
    next: hasNext ? pageLink(basePath, q, q.page + 1n) : null,
    previous: q.page > 1n ? pageLink(basePath, q, q.page - 1n) : null,
    results,
  };
}

/** format=gridjs: every cell a string or a number; null → "", objects and arrays → JSON text. */
export function gridjsCells<T extends Record<string, unknown>>(record: T): Record<keyof T, string | number> {
  const out = {} as Record<keyof T, string | number>;
  for (const [k, v] of Object.entries(record) as Array<[keyof T, unknown]>) {
    out[k] = v === null || v === undefined ? '' : typeof v === 'number' || typeof v === 'string' ? v : typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  }
  return out;
}

/** Rows to skip; null when the page lies beyond any table (no query needed: it is empty). */
export function offsetOf(q: { page: bigint; resultsPerPage: number }): number | null {
  const offset = (q.page - 1n) * BigInt(q.resultsPerPage);
  return offset > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(offset);
}

/** The rows a list query asks for, in its direction; null when the page lies beyond any table (only the total is read). */
export function pageWindowOf(q: ListQuery<string>): { limit: number; offset: number; direction: 'ASC' | 'DESC' } | null {
  const offset = offsetOf(q);
  return offset === null ? null : { limit: q.resultsPerPage, offset, direction: q.sort ?? 'DESC' };
}

/** A list's page of records in its envelope: as they are, or as table cells for `format=gridjs`. */
export function recordsEnvelope<T extends Record<string, unknown>>(basePath: string, q: ListQuery<string>, count: number, records: T[]): Envelope<unknown> {
  return envelope<unknown>(basePath, q, count, q.format === 'gridjs' ? records.map(gridjsCells) : records);
}
