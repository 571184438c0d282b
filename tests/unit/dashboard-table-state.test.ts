import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseOverviewRange } from '../../lib/dashboard/overview-range';
import { plural } from '../../lib/dashboard/format';
import {
  DEFAULT_STATE,
  TABLES,
  appendParam,
  nextSortDir,
  parseTableState,
  tableApiBase,
  tableStateToSearch,
  tableSummary,
} from '../../lib/dashboard/table-state';
import { CONVERSATION_SORT_COLUMNS, RESPONSE_SORT_COLUMNS } from '../../db/queries/sort-keys';

test('table state round-trips through the URL and drops what is invalid', () => {
  const s = parseTableState('responses', new URLSearchParams('q=caf%C3%A9&channel=7&size=50&sort=likes&dir=asc&page=3'), [7, 8]);
  assert.deepEqual(s, { q: 'café', channel: '7', status: '', declined: '', size: 50, sort: 'likes', dir: 'asc', page: 3 });
  assert.equal(tableStateToSearch(s), '?q=caf%C3%A9&channel=7&size=50&sort=likes&dir=asc&page=3');
  assert.deepEqual(parseTableState('responses', new URLSearchParams(tableStateToSearch(s)), [7, 8]), s);
  assert.equal(tableStateToSearch(DEFAULT_STATE), '');
  // invalid or foreign values fall back to the defaults, never to an API 400
  const bad = parseTableState('conversations', { q: 'x'.repeat(500), channel: '9', size: '7', sort: 'likes', dir: 'sideways', page: '0' }, [7]);
  assert.deepEqual(bad, { ...DEFAULT_STATE, q: 'x'.repeat(200) });
  assert.equal(parseTableState('conversations', { page: '1.5', channel: '-1', sort: 'response_count', dir: 'ASC' }).page, 1);
  assert.equal(parseTableState('conversations', { sort: 'response_count', dir: 'ASC' }).dir, 'asc');
  assert.equal(parseTableState('conversations', { page: ['4', '5'] }).page, 4);
});

test('the API address and the summary', () => {
  assert.equal(
    tableApiBase('conversations', { q: ' a&b ', channel: '7', sort: '', dir: 'desc' }),
    '/customer-api/v2/conversation?format=gridjs&query=a%26b&channel_id=7',
  );
  assert.equal(tableApiBase('responses', { q: '', channel: '', sort: 'likes', dir: 'asc' }), '/customer-api/v2/response?format=gridjs&order_by=likes&sort=ASC');
  assert.equal(appendParam('/x?a=1', 'b=2'), '/x?a=1&b=2');
  assert.equal(appendParam('/x', 'b=2'), '/x?b=2');
  assert.equal(tableSummary('responses', 1, 15, 1), 'Showing 1–1 of 1 response');
  assert.equal(tableSummary('conversations', 2, 15, 40), 'Showing 16–30 of 40 conversations');
  assert.equal(tableSummary('conversations', 1, 15, 0), 'No conversations');
  assert.equal(tableSummary('conversations', 9, 15, 40), 'Page 9 is past the end: 40 conversations in all');
  assert.equal(plural(1, 'like', 'likes'), '1 like');
  assert.equal(plural(0, 'like', 'likes'), '0 likes');
  assert.equal(plural(1204, 'response', 'responses'), '1,204 responses');
});

test('overview range: presets, all time, from–to, and buckets for long ranges', () => {
  const span = { first: '2024-02-10', last: '2026-10-28' };
  const today = '2026-11-23';
  assert.deepEqual(parseOverviewRange({}, today, span), { key: '30', from: '2026-10-25', to: today, days: 30, bucket: 'day' });
  assert.deepEqual(parseOverviewRange({ range: '7' }, today, span), { key: '7', from: '2026-11-17', to: today, days: 7, bucket: 'day' });
  assert.equal(parseOverviewRange({ range: '365' }, today, span).bucket, 'week');
  assert.deepEqual(parseOverviewRange({ range: 'all' }, today, span), { key: 'all', from: '2024-02-10', to: today, days: 1018, bucket: 'month' });
  assert.deepEqual(parseOverviewRange({ range: 'all' }, today, { first: null, last: null }), { key: 'all', from: today, to: today, days: 1, bucket: 'day' });
  assert.deepEqual(parseOverviewRange({ from: '2025-01-01', to: '2025-01-31' }, today, span), {
    key: 'custom',
    from: '2025-01-01',
    to: '2025-01-31',
    days: 31,
    bucket: 'day',
  });
  assert.equal(parseOverviewRange({ from: '2025-03-01', to: '2025-01-01' }, today, span).from, '2025-01-01');
  assert.equal(parseOverviewRange({ from: '2025-01-01' }, today, span).to, today);
  assert.equal(parseOverviewRange({ to: '2025-01-31' }, today, span).from, '2025-01-02');
  // invalid dates and unknown ranges: the default
  for (const p of [{ from: '2025-02-30' }, { from: 'yesterday' }, { range: '12' }, { from: '0001-01-01' }]) {
    assert.equal(parseOverviewRange(p, today, span).key, '30', JSON.stringify(p));
  }
});

test('the conversations status filter: in the URL and the API address; only the statuses svc sets, only on conversations', () => {
  const cases: Array<[string, string, string]> = [
    ['conversations', 'status=Waiting', 'Waiting'],
    ['conversations', 'status=Open&page=2', 'Open'],
    ['conversations', 'status=Closed', ''],
    ['conversations', 'status=open', ''],
    ['responses', 'status=Open', ''],
  ];
  for (const [kind, search, want] of cases) {
    const s = parseTableState(kind as 'conversations' | 'responses', new URLSearchParams(search));
    assert.equal(s.status, want, `${kind} ?${search}`);
    assert.equal(tableStateToSearch(s).includes('status='), want !== '');
  }
  const s = parseTableState('conversations', new URLSearchParams('status=Resolved&channel=7'), [7]);
  assert.equal(tableStateToSearch(s), '?channel=7&status=Resolved');
  assert.equal(tableApiBase('conversations', s), '/customer-api/v2/conversation?format=gridjs&channel_id=7&status=Resolved');
});

test('the responses declined filter: in the URL and the API address; only true or false, only on responses', () => {
  const cases: Array<[string, string, string]> = [
    ['responses', 'declined=true', 'true'],
    ['responses', 'declined=false&page=2', 'false'],
    ['responses', 'declined=TRUE', ''],
    ['responses', 'declined=yes', ''],
    ['conversations', 'declined=true', ''],
  ];
  for (const [kind, search, want] of cases) {
    const s = parseTableState(kind as 'conversations' | 'responses', new URLSearchParams(search));
    assert.equal(s.declined, want, `${kind} ?${search}`);
    assert.equal(tableStateToSearch(s).includes('declined='), want !== '');
  }
  const s = parseTableState('responses', new URLSearchParams('declined=true&channel=7'), [7]);
  assert.equal(tableStateToSearch(s), '?channel=7&declined=true');
  assert.equal(tableApiBase('responses', s), '/customer-api/v2/response?format=gridjs&channel_id=7&declined=true');
});

test('sort controls: only columns the API sorts by; the first click sorts numbers and dates descending', () => {
  const apiKeys = { conversations: Object.keys(CONVERSATION_SORT_COLUMNS), responses: Object.keys(RESPONSE_SORT_COLUMNS) };
  for (const kind of ['conversations', 'responses'] as const) {
    for (const c of TABLES[kind].columns) if (c.sort) assert.ok(apiKeys[kind].includes(c.sort), `${kind}.${c.key} sorts by ${c.sort}`);
  }
  assert.equal(TABLES.conversations.columns.find((c) => c.key === 'title')!.sort, undefined, 'no title sort: the API has none');
  const likes = TABLES.responses.columns.find((c) => c.key === 'likes')!;
  const created = TABLES.responses.columns.find((c) => c.key === 'created_at')!;
  const channel = TABLES.responses.columns.find((c) => c.key === 'channel_id')!;
  const rows: Array<[typeof likes, { sort: string; dir: 'asc' | 'desc' }, 'asc' | 'desc']> = [
    [likes, { sort: '', dir: 'desc' }, 'desc'],
    [likes, { sort: 'created_at', dir: 'asc' }, 'desc'],
    [likes, { sort: 'likes', dir: 'desc' }, 'asc'],
    [likes, { sort: 'likes', dir: 'asc' }, 'desc'],
    [created, { sort: '', dir: 'desc' }, 'desc'],
    [channel, { sort: '', dir: 'desc' }, 'asc'],
    [channel, { sort: 'channel_id', dir: 'asc' }, 'desc'],
  ];
  for (const [col, state, want] of rows) assert.equal(nextSortDir(col, state), want, `${col.key} after ${JSON.stringify(state)}`);
});
