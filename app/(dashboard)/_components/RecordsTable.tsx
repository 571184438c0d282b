'use client';
import { Grid, h } from 'gridjs';
import 'gridjs/dist/theme/mermaid.css';
import { useEffect, useRef, useState } from 'react';

type Kind = 'conversations' | 'responses';
type Channel = { id: number; name: string };
type Row = Record<string, string | number>;

const CONFIG: Record<Kind, { path: string; columns: Array<{ name: string; key: string; sort?: string; width?: string }> }> = {
  conversations: {
    path: '/customer-api/v2/conversation',
    columns: [
      { name: 'Title', key: 'title', width: '30%' }, { name: 'Status', key: 'status' },
      { name: 'Channel', key: 'channel_name', sort: 'channel_id' }, { name: 'Responses', key: 'response_count', sort: 'response_count' },
      { name: 'Created (UTC)', key: 'created_at', sort: 'created_at' }, { name: 'Updated (UTC)', key: 'updated_at', sort: 'updated_at' },
    ],
  },
  responses: {
    path: '/customer-api/v2/response',
    columns: [
      { name: 'Question', key: 'question', width: '26%' }, { name: 'Answer', key: 'answer', width: '28%' },
      { name: 'Channel', key: 'channel_id', sort: 'channel_id' }, { name: 'Likes', key: 'likes', sort: 'likes' },
      { name: 'Dislikes', key: 'dislikes', sort: 'dislikes' }, { name: 'Comments', key: 'comments', sort: 'comments' },
      { name: 'Created (UTC)', key: 'created_at', sort: 'created_at' },
    ],
  },
};

const clip = (s: unknown, n: number) => { const t = String(s ?? ''); return t.length > n ? `${t.slice(0, n)}…` : t; };
const join = (url: string, param: string) => `${url}${url.includes('?') ? '&' : '?'}${param}`;

/**
 * A Grid.js table fed by the Customer API (format=gridjs) with the session cookie. Search,
 * channel and page size live outside the grid: changing one rebuilds it, so paging restarts at 1.
 */
export function RecordsTable({ kind, channels = [], initialChannel }: { kind: Kind; channels?: Channel[]; initialChannel?: string }) {
  const el = useRef<HTMLDivElement>(null);
  const [query, setQuery] = useState('');
  const [applied, setApplied] = useState('');
  const [channel, setChannel] = useState(initialChannel ?? '');
  const [pageSize, setPageSize] = useState(15);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const t = setTimeout(() => setApplied(query.trim()), 300);
    return () => clearTimeout(t);
  }, [query]);

  useEffect(() => {
    if (!el.current) return;
    const cfg = CONFIG[kind];
    setError(null);
    let base = `${cfg.path}?format=gridjs`;
    if (applied) base = join(base, `query=${encodeURIComponent(applied)}`);
    if (channel) base = join(base, `channel_id=${encodeURIComponent(channel)}`);
    const channelName = new Map(channels.map((c) => [c.id, c.name]));
    const grid = new Grid({
      columns: cfg.columns.map((c) => ({
        name: c.name,
        width: c.width,
        sort: c.sort ? {} : false,
        formatter: (cell: unknown, row: { cells: Array<{ data: unknown }> }) => {
          const record = row.cells[row.cells.length - 1]!.data as Row;
          if (kind === 'conversations' && c.key === 'title') {
            return h('a', { href: `/conversations/${record.conversation_id}` }, clip(cell, 120) || '(untitled)');
          }
          if (kind === 'responses' && c.key === 'question') {
            return h('a', { href: `/conversations/${record.conversation_id}#r-${record.response_id}`, title: String(cell) }, clip(cell, 140));
          }
          if (kind === 'responses' && c.key === 'answer') return h('span', { title: String(cell) }, clip(cell, 160));
          if (kind === 'responses' && c.key === 'channel_id') return `${channelName.get(Number(cell)) ?? ''} #${cell}`;
          if (c.key === 'status') return h('span', { className: cell === 'Open' ? 'badge' : 'badge off' }, String(cell));
          return String(cell ?? '');
        },
      })).concat([{ name: 'record', hidden: true } as never]),
      server: {
        url: base,
        then: (data: { results: Row[] }) => data.results.map((r) => [...cfg.columns.map((c) => r[c.key]), r]),
        total: (data: { count: number }) => data.count,
        handle: (res: Response) => {
          if (res.status === 401) { window.location.assign('/login'); return { results: [], count: 0 }; }
          if (!res.ok) { setError(`The table could not be loaded (HTTP ${res.status}).`); return { results: [], count: 0 }; }
          return res.json();
        },
      } as never,
      sort: {
        multiColumn: false,
        server: {
          url: (prev: string, columns: Array<{ index: number; direction: 1 | -1 }>) => {
            const col = columns[0];
            const key = col ? cfg.columns[col.index]?.sort : undefined;
            if (!col || !key) return prev;
            return join(prev, `order_by=${key}&sort=${col.direction === 1 ? 'ASC' : 'DESC'}`);
          },
        },
      } as never,
      pagination: {
        limit: pageSize,
        server: { url: (prev: string, page: number, limit: number) => join(prev, `page=${page + 1}&resultsPerPage=${limit}`) },
      } as never,
      language: { noRecordsFound: applied || channel ? 'Nothing matches these filters.' : 'No records yet.', loading: 'Loading…' },
      className: { table: 'records' },
      autoWidth: false,
    });
    grid.render(el.current);
    return () => { grid.destroy(); if (el.current) el.current.innerHTML = ''; };
  }, [kind, applied, channel, pageSize, channels]);

  return (
    <div className="panel">
      <div className="toolbar" role="search">
        <div className="field grow">
          <label htmlFor={`${kind}-search`}>Search</label>
          <input id={`${kind}-search`} type="search" value={query} placeholder={kind === 'conversations' ? 'Title or channel name' : 'Question or answer'}
            onChange={(e) => setQuery(e.target.value)} />
        </div>
        {channels.length > 0 && (
          <div className="field">
            <label htmlFor={`${kind}-channel`}>Channel</label>
            <select id={`${kind}-channel`} value={channel} onChange={(e) => setChannel(e.target.value)}>
              <option value="">All channels</option>
              {channels.map((c) => <option key={c.id} value={c.id}>{c.name} (#{c.id})</option>)}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor={`${kind}-size`}>Rows per page</label>
          <select id={`${kind}-size`} value={pageSize} onChange={(e) => setPageSize(Number(e.target.value))}>
            {[15, 30, 50, 100].map((n) => <option key={n} value={n}>{n}</option>)}
          </select>
        </div>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      <div ref={el} className="table-scroll" />
    </div>
  );
}
