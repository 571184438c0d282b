/**
 * The NDJSON import rules (docs/contracts.md §3), through the importer in this process; results are read
 * back through the Customer API and the tables. Every rejected file must write nothing at all.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import {
  api,
  conversationLine,
  createTestAccount,
  importLines,
  newChannelIds,
  responseLine,
  type ConversationLine,
  type ResponseLine,
  type TestAccount,
} from '../helpers/builders';
import { RECORD_TABLES, snapshotAccount } from '../helpers/cli';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** Everything the Customer API shows of an account: both lists and every transcript. */
async function apiView(key: string) {
  const get = api(server.url, key);
  const convs = await get('/customer-api/v2/conversation?resultsPerPage=100&order_by=conversation_id&sort=ASC');
  const resps = await get('/customer-api/v2/response?resultsPerPage=100&order_by=response_id&sort=ASC');
  assert.equal(convs.status, 200);
  assert.equal(resps.status, 200);
  const details = [];
  for (const c of convs.body.results as Array<{ conversation_id: string }>) {
    const d = await get(`/customer-api/v2/conversation/${c.conversation_id}`);
    assert.equal(d.status, 200);
    details.push(d.body);
  }
  return { conversations: convs.body, responses: resps.body, details };
}

async function accountCounters(accountId: number) {
  const [r] = await rows<{ stored_c: number; stored_r: number; real_c: number; real_r: number }>(
    await getDb(),
    sql`
    SELECT a.conversation_count AS stored_c, a.response_count AS stored_r,
      (SELECT count(*)::int FROM conversations WHERE account_id = a.id) AS real_c,
      (SELECT count(*)::int FROM responses WHERE account_id = a.id) AS real_r
    FROM accounts a WHERE a.id = ${accountId}`,
  );
  return r!;
}

type ApiRecord = Record<string, any>;

/** The record with this response id (or, for conversations, this conversation id) in a list result. */
function byId(list: ApiRecord[], id: string): ApiRecord {
  const found = list.find((x) => x.response_id === id || (x.response_id === undefined && x.conversation_id === id));
  assert.ok(found, `record ${id} listed`);
  return found;
}

describe('import: what a valid file does', () => {
  it('returns the number of lines of each type and ignores blank lines', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const c1 = conversationLine({ channel_id: ch! });
    const c2 = conversationLine({ channel_id: ch! });
    const result = await importLines(acct.accountId, ['', c1, '   ', responseLine(c1), '\t', responseLine(c1), c2, '', responseLine(c2), '']);
    assert.deepEqual(result, { conversations: 2, responses: 3 });
    const view = await apiView(acct.key);
    assert.equal(view.conversations.count, 2);
    assert.equal(view.responses.count, 3);
  });

  it('imports every field as given, timestamps in UTC, and the transcript pairs question and answer', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const c = conversationLine({
      channel_id: ch!,
      title: 'Café ünïcödé',
      status: 'Closed',
      channel_name: 'Web',
      created_at: '2025-12-31 23:59:59',
      updated_at: '2026-01-02 00:00:01',
    });
    const r = responseLine(c, { question: 'Q "quoted"\nline', answer: 'A ✓', created_at: '2026-01-01 00:00:00', likes: 3, dislikes: 2, comments: 1 });
    await importLines(acct.accountId, [c, r]);
    const view = await apiView(acct.key);
    const conv = byId(view.conversations.results, c.conversation_id);
    assert.equal(conv.title, c.title);
    assert.equal(conv.status, 'Closed');
    assert.equal(conv.channel_id, ch);
    assert.equal(conv.channel_name, 'Web');
    assert.equal(conv.created_at, '2025-12-31 23:59:59');
    assert.equal(conv.updated_at, '2026-01-02 00:00:01');
    assert.equal(conv.response_count, 1);
    const resp = byId(view.responses.results, r.response_id);
    for (const k of ['question', 'answer', 'created_at', 'likes', 'dislikes', 'comments', 'channel_id', 'conversation_id'] as const) {
      assert.equal(resp[k], r[k], k);
    }
    const messages = view.details[0].messages as Array<{ role: string; content: string; response_id: string; created_at: string }>;
    assert.deepEqual(
      messages.map((m) => [m.role, m.content, m.response_id, m.created_at]),
      [
        ['user', r.question, r.response_id, r.created_at],
        ['assistant', r.answer, r.response_id, r.created_at],
      ],
    );
  });

  it('running the same file twice leaves the data unchanged', async () => {
    const acct = await createTestAccount();
    const [ch1, ch2] = await newChannelIds(2);
    const lines: Array<ConversationLine | ResponseLine> = [];
    for (let i = 0; i < 4; i++) {
      const c = conversationLine({ channel_id: i % 2 ? ch1! : ch2!, title: `Conversation ${i}`, created_at: `2026-01-0${i + 1} 10:00:00` });
      lines.push(c);
      for (let j = 0; j < i; j++) lines.push(responseLine(c, { created_at: `2026-01-0${i + 1} 10:0${j}:00`, likes: j }));
    }
    const first = await importLines(acct.accountId, lines);
    const db = await getDb();
    const storedBefore = await snapshotAccount(db, acct.accountId, RECORD_TABLES);
    const apiBefore = await apiView(acct.key);
    const second = await importLines(acct.accountId, lines);
    assert.deepEqual(second, first);
    assert.deepEqual(first, { conversations: 4, responses: 6 });
    assert.deepEqual(await snapshotAccount(db, acct.accountId, RECORD_TABLES), storedBefore);
    assert.deepEqual(await apiView(acct.key), apiBefore);
  });

  it('a changed title, status or count replaces the stored one (no duplicate)', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const c = conversationLine({ channel_id: ch!, title: 'Old title' });
    const r = responseLine(c, { likes: 1, dislikes: 1, comments: 1 });
    await importLines(acct.accountId, [c, r]);
    await importLines(acct.accountId, [
      { ...c, title: 'New title', status: 'Closed', updated_at: '2026-01-03 00:00:00' },
      { ...r, likes: 7, dislikes: 0, comments: 4, answer: 'Better answer.' },
    ]);
    const view = await apiView(acct.key);
    assert.equal(view.conversations.count, 1);
    assert.equal(view.responses.count, 1);
    const conv = view.conversations.results[0];
    assert.deepEqual([conv.title, conv.status, conv.updated_at, conv.response_count], ['New title', 'Closed', '2026-01-03 00:00:00', 1]);
    const resp = view.responses.results[0];
    assert.deepEqual([resp.likes, resp.dislikes, resp.comments, resp.answer], [7, 0, 4, 'Better answer.']);
  });

  it('a known channel id with a new name renames the channel for all its conversations', async () => {
    const acct = await createTestAccount();
    const [ch, other] = await newChannelIds(2);
    const c1 = conversationLine({ channel_id: ch!, channel_name: 'Old name' });
    const c2 = conversationLine({ channel_id: ch!, channel_name: 'Old name' });
    const c3 = conversationLine({ channel_id: other!, channel_name: 'Other' });
    await importLines(acct.accountId, [c1, c2, c3]);
    await importLines(acct.accountId, [conversationLine({ channel_id: ch!, channel_name: 'New name' })]);
    const view = await apiView(acct.key);
    const names = Object.fromEntries(
      (view.conversations.results as Array<{ conversation_id: string; channel_name: string }>).map((x) => [x.conversation_id, x.channel_name]),
    );
    assert.equal(names[c1.conversation_id], 'New name');
    assert.equal(names[c2.conversation_id], 'New name');
    assert.equal(names[c3.conversation_id], 'Other');
    assert.equal(view.conversations.count, 4);
  });

  it('response_count is computed from the responses, never imported', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const c = { ...conversationLine({ channel_id: ch! }), response_count: 42 };
    const empty = { ...conversationLine({ channel_id: ch! }), response_count: 5 };
    await importLines(acct.accountId, [c, responseLine(c), responseLine(c), empty]);
    let view = await apiView(acct.key);
    assert.equal(byId(view.conversations.results, c.conversation_id).response_count, 2);
    assert.equal(byId(view.conversations.results, empty.conversation_id).response_count, 0);
    // A later file may add responses to a conversation already in the account.
    await importLines(acct.accountId, [responseLine(c), responseLine(empty)]);
    view = await apiView(acct.key);
    assert.equal(byId(view.conversations.results, c.conversation_id).response_count, 3);
    assert.equal(byId(view.conversations.results, empty.conversation_id).response_count, 1);
    const counters = await accountCounters(acct.accountId);
    assert.deepEqual([counters.stored_c, counters.stored_r], [counters.real_c, counters.real_r]);
    assert.deepEqual([counters.real_c, counters.real_r], [2, 4]);
  });

  it('accepts upper-case UUIDs as the same record', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const c = conversationLine({ channel_id: ch!, title: 'lower' });
    await importLines(acct.accountId, [c]);
    await importLines(acct.accountId, [{ ...c, conversation_id: c.conversation_id.toUpperCase(), title: 'upper' }]);
    const view = await apiView(acct.key);
    assert.equal(view.conversations.count, 1);
    assert.equal(view.conversations.results[0].title, 'upper');
  });
});

describe('import: an invalid file is rejected with its line numbers and writes nothing', () => {
  let a: TestAccount;
  let b: TestAccount;
  const ctx = {} as {
    chA: number;
    chB: number;
    fresh: number;
    a1: ConversationLine;
    a2: ConversationLine;
    ra1: ResponseLine;
    ra2: ResponseLine;
    b1: ConversationLine;
    rb1: ResponseLine;
    n1: ConversationLine;
    n2: ResponseLine;
  };
  let baseline: unknown;
  let baselineApi: unknown;

  const stateOfBoth = async () => {
    const db = await getDb();
    return [await snapshotAccount(db, a.accountId, RECORD_TABLES), await snapshotAccount(db, b.accountId, RECORD_TABLES)];
  };

  before(async () => {
    a = await createTestAccount('Importer A');
    b = await createTestAccount('Importer B');
    const [chA, chB, fresh] = await newChannelIds(3);
    Object.assign(ctx, { chA, chB, fresh });
    ctx.a1 = conversationLine({ channel_id: chA! });
    ctx.a2 = conversationLine({ channel_id: chA! });
    ctx.ra1 = responseLine(ctx.a1);
    ctx.ra2 = responseLine(ctx.a2);
    ctx.b1 = conversationLine({ channel_id: chB! });
    ctx.rb1 = responseLine(ctx.b1);
    await importLines(a.accountId, [ctx.a1, ctx.ra1, ctx.a2, ctx.ra2]);
    await importLines(b.accountId, [ctx.b1, ctx.rb1]);
    ctx.n1 = conversationLine({ channel_id: fresh!, channel_name: 'Brand new' });
    ctx.n2 = responseLine(ctx.n1);
    baseline = await stateOfBoth();
    baselineApi = await apiView(a.key);
  });

  /**
   * Lines 1-4 of every file are valid and would change account A: a new channel, conversation and
   * response, a new title for a1 and new counts for ra1. The problems start at line 5.
   */
  const validPrefix = () => [ctx.n1, ctx.n2, { ...ctx.a1, title: 'Changed by a rejected file' }, { ...ctx.ra1, likes: 99 }];

  type Bad = { name: string; lines: () => Array<object | string>; at: number[]; problem: RegExp };
  const conv = (over: Partial<ConversationLine> = {}) => conversationLine({ channel_id: ctx.chA, ...over });
  const resp = (over: Partial<ResponseLine> = {}) => responseLine(ctx.a1, over);

  const CASES: Bad[] = [
    { name: 'a line that is not JSON', lines: () => ['{"type":"conversation",'], at: [5], problem: /JSON/ },
    { name: 'a JSON value that is not an object', lines: () => ['42'], at: [5], problem: /type/ },
    { name: 'an unknown type', lines: () => [{ ...conv(), type: 'message' }], at: [5], problem: /type/ },
    { name: 'a missing type', lines: () => [(({ type: _t, ...rest }) => rest)(conv())], at: [5], problem: /type/ },
    { name: 'a missing title', lines: () => [(({ title: _t, ...rest }) => rest)(conv())], at: [5], problem: /title/ },
    { name: 'a conversation_id that is not a UUID', lines: () => [conv({ conversation_id: 'not-a-uuid' })], at: [5], problem: /conversation_id/ },
    { name: 'a response_id that is not a UUID', lines: () => [resp({ response_id: '12345' })], at: [5], problem: /response_id/ },
    { name: 'a response conversation_id that is not a UUID', lines: () => [resp({ conversation_id: 'x' })], at: [5], problem: /conversation_id/ },
    { name: 'an impossible date (2026-02-30)', lines: () => [conv({ created_at: '2026-02-30 10:00:00' })], at: [5], problem: /created_at/ },
    { name: "an ISO timestamp with 'T'", lines: () => [conv({ updated_at: '2026-01-01T10:00:00' })], at: [5], problem: /updated_at/ },
    { name: 'an ISO timestamp with T and Z', lines: () => [resp({ created_at: '2026-01-01T10:00:00Z' })], at: [5], problem: /created_at/ },
    { name: 'a timestamp with an offset', lines: () => [resp({ created_at: '2026-01-01 10:00:00+02' })], at: [5], problem: /created_at/ },
    { name: 'a date without a time', lines: () => [conv({ created_at: '2026-01-01' })], at: [5], problem: /created_at/ },
    { name: 'hour 24', lines: () => [conv({ created_at: '2026-01-01 24:00:00' })], at: [5], problem: /created_at/ },
    { name: 'negative likes', lines: () => [resp({ likes: -1 })], at: [5], problem: /likes/ },
    { name: 'negative dislikes', lines: () => [resp({ dislikes: -3 })], at: [5], problem: /dislikes/ },
    { name: 'negative comments', lines: () => [resp({ comments: -1 })], at: [5], problem: /comments/ },
    { name: 'a fractional count', lines: () => [resp({ likes: 1.5 })], at: [5], problem: /likes/ },
    { name: 'a count given as a string', lines: () => [{ ...resp(), likes: '3' }], at: [5], problem: /likes/ },
    { name: 'a channel_id that is not a positive integer', lines: () => [conv({ channel_id: 0 })], at: [5], problem: /channel_id/ },
    { name: 'a NUL character in a title', lines: () => [conv({ title: 'a\u0000b' })], at: [5], problem: /title/ },
    { name: 'a NUL character in a question', lines: () => [resp({ question: '\u0000' })], at: [5], problem: /question/ },
    { name: 'a NUL character in an answer', lines: () => [resp({ answer: 'x\u0000' })], at: [5], problem: /answer/ },
    {
      name: 'a response whose conversation is nowhere',
      lines: () => [responseLine({ conversation_id: randomUUID(), channel_id: ctx.chA })],
      at: [5],
      problem: /conversation/,
    },
    {
      name: 'a response whose conversation appears only later in the file',
      lines: () => {
        const c = conv();
        return [responseLine(c), c];
      },
      at: [5],
      problem: /conversation/,
    },
    { name: "a response referring to another account's conversation", lines: () => [responseLine(ctx.b1)], at: [5], problem: /conversation/ },
    {
      name: "a response whose channel_id differs from its conversation's in the file",
      lines: () => [responseLine(ctx.n1, { channel_id: ctx.chA })],
      at: [5],
      problem: /channel_id/,
    },
    {
      name: "a response whose channel_id differs from its stored conversation's",
      lines: () => [responseLine(ctx.a2, { channel_id: ctx.fresh })],
      at: [5],
      problem: /channel_id/,
    },
    {
      name: 'a conversation id owned by another account',
      lines: () => [conv({ conversation_id: ctx.b1.conversation_id, title: 'Hijack' })],
      at: [5],
      problem: /conversation_id.*another account/,
    },
    {
      name: 'a response id owned by another account',
      lines: () => [resp({ response_id: ctx.rb1.response_id, answer: 'Hijack' })],
      at: [5],
      problem: /response_id.*another account/,
    },
    { name: 'the same conversation id twice in one file', lines: () => [{ ...ctx.n1, title: 'again' }], at: [5], problem: /conversation_id.*more than once/ },
    { name: 'the same response id twice in one file', lines: () => [{ ...ctx.n2, likes: 3 }], at: [5], problem: /response_id.*more than once/ },
    {
      name: 'several problems: every bad line is named',
      lines: () => ['nope', conv(), resp({ likes: -1 }), conv({ created_at: '2026-13-01 00:00:00' })],
      at: [5, 7, 8],
      problem: /likes/,
    },
    { name: 'a problem after blank lines keeps the physical line number', lines: () => ['', '  ', resp({ comments: -2 })], at: [7], problem: /comments/ },
  ];

  for (const c of CASES) {
    it(c.name, async () => {
      const lines = [...validPrefix(), ...c.lines()];
      await assert.rejects(importLines(a.accountId, lines), (e: Error) => {
        for (const n of c.at) assert.match(e.message, new RegExp(`\\bline ${n}\\b`), `names line ${n}: ${e.message}`);
        for (const n of [1, 2, 3, 4]) assert.doesNotMatch(e.message, new RegExp(`\\bline ${n}:`), `valid line ${n} not blamed: ${e.message}`);
        assert.match(e.message, c.problem);
        return true;
      });
      assert.deepEqual(await stateOfBoth(), baseline, 'both accounts unchanged');
    });
  }

  it('after all those rejections the API shows exactly what it showed before', async () => {
    assert.deepEqual(await apiView(a.key), baselineApi);
  });

  it('the same prefix alone is valid (so the rejections above were caused by the bad lines)', async () => {
    const result = await importLines(a.accountId, validPrefix());
    assert.deepEqual(result, { conversations: 2, responses: 2 });
    const view = await apiView(a.key);
    assert.equal(byId(view.conversations.results, ctx.a1.conversation_id).title, 'Changed by a rejected file');
    assert.equal(byId(view.responses.results, ctx.ra1.response_id).likes, 99);
  });
});
