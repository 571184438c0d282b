'use client';
import { Grid, h } from 'gridjs';
import 'gridjs/dist/theme/mermaid.css';
import { useEffect, useRef } from 'react';
import type { AuditEntry } from '@/lib/audit/contract';

const COLUMNS = [
  { id: 'at', name: 'Time (UTC)', priority: 1 },
  { id: 'actor', name: 'Member', priority: 1 },
  { id: 'action', name: 'Action', priority: 1 },
  { id: 'target', name: 'Target', priority: 1 },
  { id: 'ip', name: 'Address', priority: 2 },
] as const;

/** One page of audit entries in a Grid.js table (the page does the paging and filtering; the rows are already in order). */
export function AuditTable({ entries, filtered }: { entries: AuditEntry[]; filtered: boolean }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!el.current) return;
    const container = el.current;
    const grid = new Grid({
      columns: COLUMNS.map((c) => ({
        id: c.id,
        name: c.name,
        sort: false as never,
        attributes: (cell: unknown) =>
          cell === null ? { 'data-priority': String(c.priority) } : { 'data-label': c.name, 'data-priority': String(c.priority) },
        formatter: (cell: unknown) => {
          if (c.id === 'at') {
            const [d, t = ''] = String(cell).split(' ');
            return h('time', { dateTime: `${d}T${t}Z` }, h('span', { className: 'nowrap' }, d), ' ', h('span', { className: 'nowrap' }, t));
          }
          if (c.id === 'action') return h('code', {}, String(cell));
          return cell === '' ? h('span', { className: 'muted' }, '—') : String(cell);
        },
      })),
      // Grid.js calls `attributes` with null for the header cell: an entry's missing address is ''.
      data: entries.map((e) => COLUMNS.map((c) => e[c.id] ?? '')),
      language: { noRecordsFound: filtered ? 'No entries match these filters.' : 'No entries yet.' },
      className: { table: 'records records-audit' },
      autoWidth: false,
    });
    grid.render(container);
    return () => {
      grid.destroy();
      container.innerHTML = '';
    };
  }, [entries, filtered]);
  return <div className="table-scroll" ref={el} />;
}
