'use client';
import { Grid, h } from 'gridjs';
import 'gridjs/dist/theme/mermaid.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { parseMarkdown, renderMarkdownTree, markdownToText, type Hyperscript } from '@/lib/markdown/markdown';
import {
  CONVERSATION_STATUSES,
  DECLINED_FILTERS,
  type DeclinedFilter,
  PAGE_SIZES,
  TABLES,
  nextSortDir,
  appendParam,
  parseTableState,
  tableApiBase,
  tableStateToSearch,
  tableSummary,
  type SortDir,
  type TableKind,
  type TableState,
} from '@/lib/dashboard/table-state';

type Channel = { id: number; name: string };
type Row = Record<string, string | number>;
type Cells = { cells: Array<{ data: unknown }> };

const clip = (s: unknown, n: number) => {
  const t = String(s ?? '');
  if (t.length <= n) return t;
  const cut = t.slice(0, n);
  const space = cut.lastIndexOf(' ');
  return `${space > n * 0.6 ? cut.slice(0, space) : cut}…`;
};
/** The Customer API export of what the table shows (filter, search, sort; all pages), docs/contracts.md §10. */
function exportUrl(kind: TableKind, state: TableState, format: 'ndjson' | 'csv'): string {
  const [path, search = ''] = tableApiBase(kind, state).split('?');
  const p = new URLSearchParams(search);
  p.set('format', format);
  return `${path}/export?${p.toString()}`;
}

const hx = h as unknown as Hyperscript<ReturnType<typeof h>>;

/**
 * A Grid.js table fed by the Customer API (format=gridjs) with the session cookie. Its whole state
 * (search, channel, page size, sort, page) lives in the page's URL: Back, a reload and a shared link
 * show the same rows. A change of search, channel or size rebuilds the grid at page 1 and keeps the
 * sort; header clicks and paging happen inside the grid and are written to the URL as they happen.
 * Below ~640 px of width the rows become cards (CSS), and a "Sort by" menu replaces the headers.
 */
export function RecordsTable({ kind, channels = [], initial }: { kind: TableKind; channels?: Channel[]; initial: TableState }) {
  const el = useRef<HTMLDivElement>(null);
  // `build`: the state the grid was built from (a new object rebuilds it); `view`: what the
  // toolbar and summary show, also moved by the grid itself (header clicks, paging).
  const [build, setBuild] = useState<TableState>(initial);
  const [view, setView] = useState<TableState>(initial);
  const current = useRef<TableState>(initial);
  // Each grid gets a generation; callbacks of a grid already replaced (a click racing a rebuild)
  // are ignored, so they cannot write a stale page into the URL.
  const generation = useRef(0);
  const [query, setQuery] = useState(initial.q);
  const [total, setTotal] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cfg = TABLES[kind];

  /** Writes a state to the URL (a new history entry unless `replace`) and remembers it. */
  const record = useCallback((next: TableState, replace = false) => {
    current.current = next;
    setView(next);
    const url = `${window.location.pathname}${tableStateToSearch(next)}`;
    if (url === `${window.location.pathname}${window.location.search}`) return;
    if (replace) window.history.replaceState(null, '', url);
    else window.history.pushState(null, '', url);
  }, []);

  /** A change made outside the grid: rebuild it with this state. */
  const change = useCallback(
    (patch: Partial<TableState>, replace = false) => {
      const next = { ...current.current, ...patch };
      record(next, replace);
      setBuild(next);
    },
    [record],
  );
  const changeRef = useRef(change);
  changeRef.current = change;

  // Search as you type (debounced); a new search starts at page 1 and replaces the history entry.
  useEffect(() => {
    if (query.trim() === current.current.q.trim()) return;
    const t = setTimeout(() => change({ q: query.trim(), page: 1 }, true), 300);
    return () => clearTimeout(t);
  }, [query, change]);

  // Back and Forward: the URL is the truth.
  useEffect(() => {
    const onPop = () => {
      const next = parseTableState(
        kind,
        new URLSearchParams(window.location.search),
        channels.map((c) => c.id),
      );
      current.current = next;
      setQuery(next.q);
      setView(next);
      setBuild(next);
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [kind, channels]);

  useEffect(() => {
    if (!el.current) return;
    const container = el.current;
    const gen = ++generation.current;
    const live = () => gen === generation.current;
    setError(null);
    setTotal(null);
    const state = build;
    const channelName = new Map(channels.map((c) => [c.id, c.name]));
    const labelOf = new Map(cfg.columns.map((c) => [c.key, c.label]));
    const grid = new Grid({
      columns: cfg.columns
        .map((c) => ({
          id: c.key,
          // Sorting is ours, not Grid.js's (6.2 cannot start from a given sort): a header button
          // changes the state, the grid is rebuilt with order_by in its URL, at page 1.
          name: c.sort
            ? h(
                'button',
                {
                  type: 'button',
                  className: 'th-sort',
                  onClick: () => changeRef.current({ sort: c.sort!, dir: nextSortDir(c, state), page: 1 }),
                },
                h('span', { className: 'th-label' }, c.label),
                h('span', { className: `sort-icon ${state.sort === c.sort ? state.dir : 'none'}`, 'aria-hidden': 'true' }),
              )
            : c.label,
          sort: false as never,
          attributes: (cell: unknown) =>
            cell === null
              ? {
                  'data-priority': String(c.priority),
                  ...(c.sort && state.sort === c.sort ? { 'aria-sort': state.dir === 'asc' ? 'ascending' : 'descending' } : {}),
                }
              : { 'data-label': labelOf.get(c.key), 'data-priority': String(c.priority) },
          formatter: (cell: unknown, row: Cells) => {
            const rec = row.cells[row.cells.length - 1]!.data as Row;
            if (c.key === 'title')
              return h('a', { href: `/conversations/${rec.conversation_id}`, className: 'row-title', title: clip(cell, 600) }, clip(cell, 140) || '(untitled)');
            if (c.key === 'question') {
              return h(
                'a',
                {
                  href: `/conversations/${rec.conversation_id}?response=${rec.response_id}#r-${rec.response_id}`,
                  className: 'row-title',
                  title: clip(markdownToText(String(cell)), 600),
                },
                ...renderMarkdownTree(parseMarkdown(clip(cell, 300)), hx, { compact: true, links: false }),
              );
            }
            if (c.key === 'answer') {
              const text = h(
                'span',
                { className: 'md md-compact clamp', title: clip(markdownToText(String(cell)), 600) },
                ...renderMarkdownTree(parseMarkdown(clip(cell, 400)), hx, { compact: true }),
              );
              return rec.declined === 'true' ? h('span', { className: 'answer-cell' }, h('span', { className: 'badge declined' }, 'Declined'), text) : text;
            }
            if (c.kind === 'channel') {
              const id = Number(kind === 'responses' ? cell : rec.channel_id);
              const name = kind === 'responses' ? (channelName.get(id) ?? '') : String(cell ?? '');
              return h('span', { className: 'channel' }, name, ' ', h('span', { className: 'muted nowrap' }, `#${id}`));
            }
            if (c.kind === 'badge') return h('span', { className: cell === 'Open' ? 'badge' : 'badge off' }, String(cell));
            if (c.kind === 'date') {
              const [d, t = ''] = String(cell ?? '').split(' ');
              // Minutes are enough in a list (the transcript has the seconds); a wide table keeps the date on
              // one line (globals.css), a narrower one lets the time go under the date so the texts keep the room.
              return h(
                'time',
                { dateTime: `${d}T${t}Z`, title: `${d} ${t} UTC` },
                h('span', { className: 'nowrap' }, d),
                ' ',
                h('span', { className: 'nowrap' }, t.slice(0, 5)),
              );
            }
            return String(cell ?? '');
          },
        }))
        .concat([{ id: 'record', name: 'record', hidden: true } as never]),
      server: {
        url: tableApiBase(kind, state),
        then: (data: { results: Row[] }) => data.results.map((r) => [...cfg.columns.map((c) => r[c.key]), r]),
        total: (data: { count: number }) => {
          if (live()) setTotal(data.count);
          return data.count;
        },
        handle: (res: Response) => {
          if (res.status === 401) {
            window.location.assign('/login');
            return { results: [], count: 0 };
          }
          if (!res.ok) {
            if (live()) setError(`The table could not be loaded (HTTP ${res.status}).`);
            return { results: [], count: 0 };
          }
          return res.json();
        },
      } as never,
      pagination: {
        limit: state.size,
        page: state.page - 1,
        summary: false,
        server: {
          url: (prev: string, page: number, limit: number) => {
            const now = current.current;
            if (live() && page + 1 !== now.page) record({ ...now, page: page + 1 });
            return appendParam(prev, `page=${page + 1}&resultsPerPage=${limit}`);
          },
        },
      } as never,
      language: {
        noRecordsFound: state.q || state.channel || state.status || state.declined ? 'Nothing matches these filters.' : `No ${cfg.noun[1]} yet.`,
        loading: 'Loading…',
        error: 'The table could not be loaded.',
      },
      className: { table: `records records-${kind}` },
      autoWidth: false,
    });
    grid.render(container);
    return () => {
      grid.destroy();
      container.innerHTML = '';
    };
  }, [kind, channels, cfg, build, record]);

  const sortChoice = view.sort ? `${view.sort}:${view.dir}` : '';
  return (
    <div className="panel table-panel" data-empty={total === 0 ? '' : undefined}>
      <div className="toolbar" role="search">
        <div className="field grow">
          <label htmlFor={`${kind}-search`}>Search</label>
          <input
            id={`${kind}-search`}
            type="search"
            value={query}
            placeholder={kind === 'conversations' ? 'Title or channel name' : 'Question or answer'}
            onChange={(e) => setQuery(e.target.value)}
          />
        </div>
        {channels.length > 0 && (
          <div className="field">
            <label htmlFor={`${kind}-channel`}>Channel</label>
            <select id={`${kind}-channel`} value={view.channel} onChange={(e) => change({ channel: e.target.value, page: 1 })}>
              <option value="">All channels</option>
              {channels.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name} (#{c.id})
                </option>
              ))}
            </select>
          </div>
        )}
        {kind === 'conversations' && (
          <div className="field">
            <label htmlFor={`${kind}-status`}>Status</label>
            <select id={`${kind}-status`} value={view.status} onChange={(e) => change({ status: e.target.value, page: 1 })}>
              <option value="">All statuses</option>
              {CONVERSATION_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
        )}
        {kind === 'responses' && (
          <div className="field">
            <label htmlFor={`${kind}-declined`}>Declined</label>
            <select id={`${kind}-declined`} value={view.declined} onChange={(e) => change({ declined: e.target.value as DeclinedFilter, page: 1 })}>
              {DECLINED_FILTERS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="field sort-field">
          <label htmlFor={`${kind}-sort`}>Sort by</label>
          <select
            id={`${kind}-sort`}
            value={sortChoice}
            onChange={(e) => {
              const [sort = '', dir = 'desc'] = e.target.value.split(':');
              change({ sort, dir: dir as SortDir, page: 1 });
            }}
          >
            <option value="">Default (newest first)</option>
            {cfg.columns
              .filter((c) => c.sort)
              .flatMap((c) => [
                <option key={`${c.sort}:desc`} value={`${c.sort}:desc`}>
                  {c.label.replace(' (UTC)', '')}: {c.kind === 'date' ? 'newest first' : c.kind === 'channel' ? 'highest id first' : 'most first'}
                </option>,
                <option key={`${c.sort}:asc`} value={`${c.sort}:asc`}>
                  {c.label.replace(' (UTC)', '')}: {c.kind === 'date' ? 'oldest first' : c.kind === 'channel' ? 'lowest id first' : 'fewest first'}
                </option>,
              ])}
          </select>
        </div>
        <div className="field export-field">
          {/* biome-ignore lint/a11y/noLabelWithoutControl: it names the group of export links (aria-labelledby), styled as the other fields' labels */}
          <label id={`${kind}-export`}>Export</label>
          <span className="nowrap" role="group" aria-labelledby={`${kind}-export`}>
            <a
              className="btn secondary"
              href={exportUrl(kind, view, 'ndjson')}
              download
              data-testid="export-ndjson"
              title={`All matching ${cfg.noun[1]}, one JSON record per line`}
            >
              NDJSON
            </a>{' '}
            <a className="btn secondary" href={exportUrl(kind, view, 'csv')} download data-testid="export-csv" title={`All matching ${cfg.noun[1]} as CSV`}>
              CSV
            </a>
          </span>
        </div>
        <div className="field size-field">
          <label htmlFor={`${kind}-size`}>Rows per page</label>
          <select id={`${kind}-size`} value={view.size} onChange={(e) => change({ size: Number(e.target.value), page: 1 })}>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </div>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div ref={el} className="table-scroll" />
      <p className="table-summary muted" role="status" aria-live="polite" data-testid="table-summary">
        {/* With no rows the grid's own message says so; a second one would repeat it. */}
        {total === null || total === 0 ? '\u00a0' : tableSummary(kind, view.page, view.size, total)}
      </p>
    </div>
  );
}
