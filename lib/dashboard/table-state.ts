/**
 * The dashboard tables' state (search, channel, page size, sort, page) as it lives in the page's
 * URL, so it survives Back and a reload and can be shared as a link. Pure functions: the table
 * component, the pages and the unit tests share them.
 */
import { API_BASE, LIST_PATHS } from '../api/links';
import { MAX_QUERY_CHARS } from '../limits/text';
import { plural } from './format';

export type TableKind = 'conversations' | 'responses';
export type SortDir = 'asc' | 'desc';
/** `declined`: the responses table's filter (docs/contracts.md §15): '' all, 'true' declined, 'false' answered. */
export type TableState = { q: string; channel: string; status: string; declined: DeclinedFilter; size: number; sort: string; dir: SortDir; page: number };
export type DeclinedFilter = '' | 'true' | 'false';
export const DECLINED_FILTERS: ReadonlyArray<[DeclinedFilter, string]> = [
  ['', 'All'],
  ['true', 'Declined'],
  ['false', 'Answered'],
];

/** The statuses svc sets (docs/contracts.md, statuses): the conversations table filters by them (`status=`). */
export const CONVERSATION_STATUSES = ['Open', 'Waiting', 'Snoozed', 'Resolved'] as const;

/**
 * Column priority: 1 always shown, 2 hidden when the table is narrow, 3 only on wide tables.
 * `sort` is the API's order_by for that column (absent: not sortable).
 */
export type TableColumn = { key: string; label: string; sort?: string; priority: 1 | 2 | 3; kind?: 'text' | 'number' | 'date' | 'badge' | 'channel' };

export const TABLES: Record<TableKind, { path: string; noun: [string, string]; columns: TableColumn[] }> = {
  conversations: {
    path: `${API_BASE}${LIST_PATHS.conversations}`,
    noun: ['conversation', 'conversations'],
    columns: [
      { key: 'title', label: 'Title', priority: 1, kind: 'text' },
      { key: 'status', label: 'Status', priority: 2, kind: 'badge' },
      { key: 'channel_name', label: 'Channel', sort: 'channel_id', priority: 2, kind: 'channel' },
      { key: 'response_count', label: 'Responses', sort: 'response_count', priority: 1, kind: 'number' },
      { key: 'created_at', label: 'Created (UTC)', sort: 'created_at', priority: 1, kind: 'date' },
      { key: 'updated_at', label: 'Updated (UTC)', sort: 'updated_at', priority: 3, kind: 'date' },
    ],
  },
  responses: {
    path: `${API_BASE}${LIST_PATHS.responses}`,
    noun: ['response', 'responses'],
    columns: [
      { key: 'question', label: 'Question', priority: 1, kind: 'text' },
      { key: 'answer', label: 'Answer', priority: 1, kind: 'text' },
      { key: 'channel_id', label: 'Channel', sort: 'channel_id', priority: 2, kind: 'channel' },
      { key: 'likes', label: 'Likes', sort: 'likes', priority: 2, kind: 'number' },
      { key: 'dislikes', label: 'Dislikes', sort: 'dislikes', priority: 3, kind: 'number' },
      { key: 'comments', label: 'Comments', sort: 'comments', priority: 3, kind: 'number' },
      { key: 'created_at', label: 'Created (UTC)', sort: 'created_at', priority: 1, kind: 'date' },
    ],
  },
};

export const PAGE_SIZES = [15, 30, 50, 100] as const;
export const DEFAULT_STATE: TableState = { q: '', channel: '', status: '', declined: '', size: 15, sort: '', dir: 'desc', page: 1 };

type Params = URLSearchParams | Record<string, string | string[] | undefined>;

function first(params: Params, name: string): string {
  if (params instanceof URLSearchParams) return params.get(name) ?? '';
  const v = params[name];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/** Reads a table's state from URL parameters; anything unknown or invalid falls back to the default. */
export function parseTableState(kind: TableKind, params: Params, channelIds?: number[]): TableState {
  const size = Number(first(params, 'size'));
  const page = Number(first(params, 'page'));
  const sort = first(params, 'sort');
  const dir = first(params, 'dir').toLowerCase();
  const channel = first(params, 'channel');
  const sortable = TABLES[kind].columns.some((c) => c.sort === sort);
  const channelOk = /^\d{1,10}$/.test(channel) && (!channelIds || channelIds.includes(Number(channel)));
  const status = first(params, 'status');
  const declined = first(params, 'declined');
  return {
    q: first(params, 'q').slice(0, MAX_QUERY_CHARS),
    channel: channelOk ? channel : '',
    status: kind === 'conversations' && (CONVERSATION_STATUSES as readonly string[]).includes(status) ? status : '',
    declined: kind === 'responses' && (declined === 'true' || declined === 'false') ? declined : '',
    size: (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_STATE.size,
    sort: sortable ? sort : '',
    dir: sortable && dir === 'asc' ? 'asc' : 'desc',
    page: Number.isInteger(page) && page >= 1 && page <= 2_147_483_647 ? page : 1,
  };
}

/** The page's query string for a state: only what differs from the default, in a stable order. */
export function tableStateToSearch(state: TableState): string {
  const p = new URLSearchParams();
  if (state.q) p.set('q', state.q);
  if (state.channel) p.set('channel', state.channel);
  if (state.status) p.set('status', state.status);
  if (state.declined) p.set('declined', state.declined);
  if (state.size !== DEFAULT_STATE.size) p.set('size', String(state.size));
  if (state.sort) {
    p.set('sort', state.sort);
    p.set('dir', state.dir);
  }
  if (state.page > 1) p.set('page', String(state.page));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** The Customer API address the grid starts from (the grid adds page and resultsPerPage). */
export function tableApiBase(
  kind: TableKind,
  state: Pick<TableState, 'q' | 'channel' | 'sort' | 'dir'> & { status?: string; declined?: DeclinedFilter },
): string {
  const p = new URLSearchParams({ format: 'gridjs' });
  if (state.q.trim()) p.set('query', state.q.trim());
  if (state.channel) p.set('channel_id', state.channel);
  if (state.status) p.set('status', state.status);
  if (state.declined) p.set('declined', state.declined);
  if (state.sort) {
    p.set('order_by', state.sort);
    p.set('sort', state.dir.toUpperCase());
  }
  return `${TABLES[kind].path}?${p.toString()}`;
}

/** Appends a parameter with `?` or `&` as the URL needs (Grid.js chains its URL builders). */
export function appendParam(url: string, param: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${param}`;
}

/** A header's first click: numbers and dates most/newest first, text A to Z; a second click reverses. */
export function nextSortDir(column: TableColumn, state: Pick<TableState, 'sort' | 'dir'>): SortDir {
  if (state.sort === column.sort) return state.dir === 'asc' ? 'desc' : 'asc';
  return column.kind === 'number' || column.kind === 'date' ? 'desc' : 'asc';
}

/** "Showing 16–30 of 40 conversations" for the table's footer. */
export function tableSummary(kind: TableKind, page: number, size: number, total: number): string {
  const [one, many] = TABLES[kind].noun;
  if (total === 0) return `No ${many}`;
  const from = (page - 1) * size + 1;
  if (from > total) return `Page ${page} is past the end: ${plural(total, one, many)} in all`;
  const to = Math.min(page * size, total);
  return `Showing ${from.toLocaleString('en')}–${to.toLocaleString('en')} of ${plural(total, one, many)}`;
}
