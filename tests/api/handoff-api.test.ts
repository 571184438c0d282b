/**
 * Human handoff in the Customer API (docs/contracts.md §14): conversation records gain handled_by,
 * assignee, waiting_since, resolved_at and csat (list, by id, gridjs, export NDJSON and CSV on
 * both paths); messages gain author and author_name (notes included); both lists filter by
 * status and handled_by; imports keep any status and accept the new fields; the OpenAPI document
 * says so; tenancy; bad input.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'csv-stringify/sync';
import { createAdminUser } from '../../lib/accounts/service';
import {
  addNote,
  rateConversation,
  replyAsMember,
  snoozeConversation,
  requestHandoff,
  resolveConversation,
  storeVisitorMessage,
  takeOver,
} from '../../lib/conversations/handoff';
import type { Member } from '../../lib/conversations/handoff-contract';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type ConversationLine } from '../helpers/builders';
import { assertParamError, CONVERSATION_KEYS, MESSAGE_KEYS, V2, type Rec } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
let setExportKeysetOnly: (on: boolean) => void;
let w: Awaited<ReturnType<typeof world>>;
before(
  async () => {
    server = await startTestServer();
    ({ setExportKeysetOnly } = await import('../../lib/export/service'));
    w = await world();
  },
  { timeout: 120_000 },
);
after(async () => {
  setExportKeysetOnly?.(false);
  await server?.close();
});

/** Awkward for JSON, CSV and SQL alike: quotes, commas, line breaks, a formula start, a backslash, non-ASCII. */
const AWKWARD = '=Ann "the, \\ best"\r\nO’Neil ☃';

async function world() {
  const acct = await createTestAccount('Handoff API Co');
  const [channel] = await newChannelIds(1);
  const email = `ann-${randomUUID()}@example.test`;
  const u = await createAdminUser(CLI, { accountId: acct.accountId, email, password: 'member password 1', role: 'agent', name: AWKWARD });
  const ann: Member = { accountId: acct.accountId, userId: u.user_id, role: 'agent' };
  const lines: ConversationLine[] = [];
  const conv = async (over: Partial<ConversationLine> = {}) => {
    const c = conversationLine({ channel_id: channel!, ...over });
    lines.push(c);
    await importLines(acct.accountId, [c, responseLine(c, { question: `Q of ${c.title}`, answer: 'A.' })]);
    return c.conversation_id;
  };
  const visitor = (id: string) => ({ accountId: acct.accountId, conversationId: id });
  const open = await conv({ title: 'stays with the AI' });
  const waiting = await conv({ title: 'waiting' });
  await requestHandoff(visitor(waiting));
  const human = await conv({ title: 'with Ann' });
  await takeOver(ann, { conversation_id: human });
  await storeVisitorMessage(visitor(human), { client_message_id: 'v1', text: `visitor says ${AWKWARD}` });
  await replyAsMember(ann, { conversation_id: human, text: `Ann replies ${AWKWARD}` });
  await addNote(ann, { conversation_id: human, text: 'internal, "quoted"' });
  const resolved = await conv({ title: 'resolved' });
  await takeOver(ann, { conversation_id: resolved });
  await resolveConversation(ann, { conversation_id: resolved });
  await rateConversation(visitor(resolved), { rating: 4, comment: 'ok' });
  const closed = await conv({ title: 'imported closed', status: 'Closed' });
  const other = await createTestAccount('Other Co');
  const [otherChannel] = await newChannelIds(1);
  const foreign = conversationLine({ channel_id: otherChannel!, status: 'Waiting' });
  await importLines(other.accountId, [foreign]);
  return { acct, ann, email, open, waiting, human, resolved, closed, foreign: foreign.conversation_id, get: api(server.url, acct.key) };
}

type Raw = { status: number; text: string };
async function raw(path: string): Promise<Raw> {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${w.acct.key}` } });
  return { status: res.status, text: await res.text() };
}

/** An export body; on PostgreSQL also on the keyset path, byte-identical to COPY's. */
async function exported(path: string): Promise<string> {
  const res = await raw(path);
  assert.equal(res.status, 200, res.text.slice(0, 300));
  if (server.kind === 'postgres') {
    setExportKeysetOnly(true);
    try {
      assert.equal((await raw(path)).text, res.text, `COPY and keyset bodies differ for ${path}`);
    } finally {
      setExportKeysetOnly(false);
    }
  }
  return res.text;
}

const ndjson = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);

describe('conversation records and messages', () => {
  it('by id: the handoff fields and every message with its author, notes included', async () => {
    const res = await w.get(`${V2}/conversation/${w.human}`);
    assert.equal(res.status, 200);
    const b = res.body as Rec & { messages: Rec[] };
    assert.deepEqual(
      Object.keys(b)
        .filter((k) => k !== 'messages')
        .sort(),
      CONVERSATION_KEYS,
    );
    assert.deepEqual([b.status, b.handled_by, b.assignee, b.waiting_since, b.resolved_at, b.csat], ['Open', 'human', w.email, null, null, null]);
    for (const m of b.messages) assert.deepEqual(Object.keys(m).sort(), MESSAGE_KEYS);
    assert.deepEqual(
      b.messages.map((m) => [m.role, m.author, m.author_name, m.response_id === null]),
      [
        ['user', 'visitor', null, false],
        ['assistant', 'ai', null, false],
        ['assistant', 'system', null, true],
        ['user', 'visitor', null, true],
        ['assistant', 'agent', AWKWARD, true],
        ['assistant', 'note', AWKWARD, true],
      ],
    );
    assert.equal(b.messages[2]!.content, `${AWKWARD} joined`);

    const waiting = (await w.get(`${V2}/conversation/${w.waiting}`)).body as Rec;
    assert.deepEqual([waiting.status, waiting.handled_by, waiting.assignee], ['Waiting', 'human', null]);
    assert.match(String(waiting.waiting_since), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const resolved = (await w.get(`${V2}/conversation/${w.resolved}`)).body as Rec;
    assert.deepEqual([resolved.status, resolved.csat, resolved.waiting_since], ['Resolved', 4, null]);
    assert.match(String(resolved.resolved_at), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    const cells = (await w.get(`${V2}/conversation/${w.waiting}?format=gridjs`)).body as Rec;
    assert.deepEqual([cells.handled_by, cells.assignee, cells.csat], ['human', '', '']);
  });

  it('lists filter by status (exactly, imported values too) and handled_by; responses by their conversation’s', async () => {
    const ids = async (q: string) =>
      ((await w.get(`${V2}/conversation?${q}`)).body as { count: number; results: Rec[] }).results.map((r) => r.conversation_id).sort();
    const cases: Array<[string, string[]]> = [
      ['status=Waiting', [w.waiting]],
      ['status=Open', [w.open, w.human]],
      ['status=Closed', [w.closed]],
      ['status=closed', []],
      ['handled_by=human', [w.waiting, w.human, w.resolved]],
      ['handled_by=ai', [w.open, w.closed]],
      ['status=Open&handled_by=human', [w.human]],
      ['status=Resolved&handled_by=ai', []],
    ];
    for (const [q, want] of cases) {
      assert.deepEqual(await ids(q), [...want].sort(), q);
      const page = (await w.get(`${V2}/conversation?${q}&resultsPerPage=1`)).body as { count: number; next: string | null };
      assert.equal(page.count, want.length, `count of ${q}`);
      if (want.length > 1) assert.match(String(page.next), new RegExp(q.replace(/&/g, '.*')), 'the next link keeps the filter');
    }
    const responses = (await w.get(`${V2}/response?handled_by=human&status=Open`)).body as { count: number; results: Rec[] };
    assert.deepEqual(
      responses.results.map((r) => r.conversation_id),
      [w.human],
    );
    assert.equal(responses.count, 1);
  });

  it('bad filters are 400 problem+json naming the parameter', async () => {
    for (const [q, param] of [
      ['handled_by=robot', 'handled_by'],
      [`status=${'x'.repeat(101)}`, 'status'],
      ['status=a%00b', 'status'],
    ] as const) {
      assertParamError(await w.get(`${V2}/conversation?${q}`), param);
      assertParamError(await w.get(`${V2}/response?${q}`), param);
      assertParamError(await w.get(`${V2}/conversation/export?${q}`), param);
    }
  });

  it('tenancy: another account’s conversation is 404 and never in a filtered list', async () => {
    assert.equal((await w.get(`${V2}/conversation/${w.foreign}`)).status, 404);
    const waiting = (await w.get(`${V2}/conversation?status=Waiting`)).body as { results: Rec[] };
    assert.ok(!waiting.results.some((r) => r.conversation_id === w.foreign));
  });
});

describe('export', () => {
  it('NDJSON equals the list; include=messages equals GET by id; CSV equals csv-stringify of the records', async () => {
    for (const q of ['', 'status=Open', 'handled_by=human&order_by=updated_at&sort=ASC']) {
      const list = (await w.get(`${V2}/conversation?resultsPerPage=100&${q}`)).body as { results: Rec[] };
      const lines = ndjson(await exported(`${V2}/conversation/export?${q}`));
      assert.deepEqual(lines, list.results, q);
      const csv = await exported(`${V2}/conversation/export?format=csv&${q}`);
      const expected = stringify(list.results, {
        header: true,
        columns: Object.keys(list.results[0] ?? { conversation_id: 1 }),
        record_delimiter: '\r\n',
        quoted_match: /[\r\n]/,
        cast: { string: (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v) },
      });
      if (list.results.length > 0) assert.equal(csv, expected, `CSV of ${q}`);
    }
    const withMessages = ndjson(await exported(`${V2}/conversation/export?include=messages&handled_by=human`));
    for (const line of withMessages) {
      const one = (await w.get(`${V2}/conversation/${line.conversation_id}`)).body;
      assert.deepEqual(line, one);
    }
    assert.ok(
      withMessages.some((l) => (l.messages as Rec[]).some((m) => m.author === 'note')),
      'notes are in the export',
    );
  });
});

describe('imports keep any status and accept the handoff fields', () => {
  it('given fields are stored, absent ones kept on re-import, a null clears; an unknown assignee names the line', async () => {
    const [channel] = await newChannelIds(1);
    const c = {
      ...conversationLine({ channel_id: channel!, status: 'Pending' }),
      handled_by: 'human',
      assignee: w.email.toUpperCase(),
      waiting_since: '2026-01-01 10:00:00',
      csat: 2,
    };
    await importLines(w.acct.accountId, [c]);
    const got = async () => (await w.get(`${V2}/conversation/${c.conversation_id}`)).body as Rec;
    const r = await got();
    assert.deepEqual(
      [r.status, r.handled_by, r.assignee, r.waiting_since, r.resolved_at, r.csat],
      ['Pending', 'human', w.email, '2026-01-01 10:00:00', null, 2],
    );
    const { handled_by: _h, assignee: _a, waiting_since: _ws, csat: _c, ...plain } = c;
    await importLines(w.acct.accountId, [plain]);
    assert.deepEqual(await got(), r, 'a line without the fields keeps them');
    await importLines(w.acct.accountId, [{ ...plain, assignee: null, csat: null, resolved_at: '2026-01-02 11:00:00' }]);
    const cleared = await got();
    assert.deepEqual([cleared.assignee, cleared.csat, cleared.resolved_at, cleared.handled_by], [null, null, '2026-01-02 11:00:00', 'human']);

    const bad: Array<[object, RegExp]> = [
      [{ ...plain, assignee: 'nobody@example.test' }, /line 1: assignee nobody@example.test is not a member of this account/],
      [{ ...plain, handled_by: 'robot' }, /line 1: .*handled_by: must be ai or human/],
      [{ ...plain, csat: 9 }, /line 1: .*csat: must be 1 to 5/],
      [{ ...plain, waiting_since: 'yesterday' }, /line 1: .*waiting_since/],
    ];
    for (const [line, message] of bad) {
      await assert.rejects(importLines(w.acct.accountId, [line]), (e: Error) => {
        assert.match(e.message, message);
        return true;
      });
    }
  });
});

describe('the server’s snooze sweeper', () => {
  it('wakes a snoozed conversation at its time, with no request', { timeout: 60_000 }, async () => {
    const [channel] = await newChannelIds(1);
    const c = conversationLine({ channel_id: channel! });
    await importLines(w.acct.accountId, [c]);
    await snoozeConversation(w.ann, { conversation_id: c.conversation_id, until: new Date(Date.now() + 1000).toISOString() });
    assert.equal(((await w.get(`${V2}/conversation/${c.conversation_id}`)).body as Rec).status, 'Snoozed');
    const deadline = Date.now() + 40_000;
    let status = 'Snoozed';
    while (status === 'Snoozed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      status = String(((await w.get(`${V2}/conversation/${c.conversation_id}`)).body as Rec).status);
    }
    assert.equal(status, 'Open');
  });
});

describe('OpenAPI', () => {
  it('documents the record fields, the message authors and both filters on both lists', async () => {
    const doc = (await w.get(`${V2}/openapi.json`)).body as {
      paths: Record<string, { get: { parameters: Array<{ name: string }> } }>;
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    for (const path of ['/conversation', '/response', '/conversation/export', '/response/export']) {
      const item = doc.paths[path] ?? doc.paths[`${V2}${path}`];
      assert.ok(item, `${path} in ${Object.keys(doc.paths).join(', ')}`);
      const names = item.get.parameters.map((p) => p.name);
      assert.ok(names.includes('status') && names.includes('handled_by'), `${path}: ${names.join(', ')}`);
    }
    for (const k of ['handled_by', 'assignee', 'waiting_since', 'resolved_at', 'csat']) assert.ok(k in doc.components.schemas.Conversation!.properties, k);
    for (const k of ['author', 'author_name']) assert.ok(k in doc.components.schemas.Message!.properties, k);
  });
});
