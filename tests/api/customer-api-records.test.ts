/** Customer API v2 single-record operations: record shapes, conversation messages, 404s, gridjs. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import {
  assertEnvelope,
  assertProblem,
  CONVERSATION_KEYS,
  expectedConversation,
  expectedResponse,
  MESSAGE_KEYS,
  RESPONSE_KEYS,
  TS_RE,
  UUID_RE,
  V2,
  type ApiResult,
} from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** An account with one conversation of three responses imported out of time order. */
async function accountWithConversation() {
  const acct = await createTestAccount();
  const [ch] = await newChannelIds(1);
  const conv = conversationLine({
    channel_id: ch!,
    title: 'Shipping to Zürich',
    status: 'Open',
    channel_name: 'Web shop',
    created_at: '2026-02-03 04:05:06',
    updated_at: '2026-02-03 05:06:07',
  });
  const late = responseLine(conv, { question: 'And customs?', answer: 'Included.', created_at: '2026-02-03 04:30:00', likes: 2, dislikes: 1, comments: 3 });
  const early = responseLine(conv, { question: 'Do you ship to Zürich?', answer: 'Yes, in 2 days.', created_at: '2026-02-03 04:06:00' });
  const middle = responseLine(conv, { question: 'Cost?', answer: '12 € "flat"\nper order', created_at: '2026-02-03 04:10:00' });
  await importLines(acct.accountId, [conv, late, early, middle]);
  return { acct, conv, responses: [early, middle, late], get: api(server.url, acct.key) };
}

describe('GET /response/{response_id}', () => {
  it('returns exactly the response record of spec 2.2, with comment_list (§16; imported responses have counts, no texts)', async () => {
    const { responses, get } = await accountWithConversation();
    for (const r of responses) {
      const res = await get(`${V2}/response/${r.response_id}`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(Object.keys(res.body).sort(), [...RESPONSE_KEYS, 'comment_list'].sort());
      const expected: Record<string, unknown> = { ...expectedResponse(r), comment_list: [] };
      assert.deepEqual(res.body, expected);
      assert.equal(res.body.id, res.body.response_id);
      assert.match(String(res.body.response_id), UUID_RE);
      assert.match(String(res.body.created_at), TS_RE);
      for (const k of ['channel_id', 'likes', 'dislikes', 'comments']) assert.ok(Number.isInteger(res.body[k]), k);
      assert.equal(res.body.declined, false, 'declined: the stored flag, a boolean');
    }
  });

  it('is the same record the list returns (which has no comment_list)', async () => {
    const { responses, get } = await accountWithConversation();
    const list = assertEnvelope(await get(`${V2}/response`));
    for (const item of list.results) {
      const { comment_list, ...one } = (await get(`${V2}/response/${String(item.id)}`)).body;
      assert.deepEqual(comment_list, []);
      assert.deepEqual(one, item);
    }
    assert.equal(list.results.length, responses.length);
  });

  it('accepts the id in upper case (UUIDs are case-insensitive)', async () => {
    const { responses, get } = await accountWithConversation();
    const r = responses[0]!;
    const res = await get(`${V2}/response/${r.response_id.toUpperCase()}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.response_id, r.response_id);
  });

  it('format=gridjs gives the same record with string or number cells (declined as "true"/"false")', async () => {
    const { responses, get } = await accountWithConversation();
    const r = responses[1]!;
    const res = await get(`${V2}/response/${r.response_id}?format=gridjs`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ...expectedResponse(r), declined: 'false' });
  });
});

describe('GET /conversation/{conversation_id}', () => {
  it('returns the conversation record of spec 2.3 with its messages, oldest first, question then answer', async () => {
    const { acct, conv, responses, get } = await accountWithConversation();
    const res = await get(`${V2}/conversation/${conv.conversation_id}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(Object.keys(res.body).sort(), [...CONVERSATION_KEYS, 'messages'].sort());
    const { messages, ...record } = res.body;
    assert.deepEqual(record, expectedConversation(conv, responses, acct.accountId));
    assert.equal(record.id, record.conversation_id);
    assert.equal(record.response_count, 3);
    assert.equal(record.account_id, acct.accountId);
    assert.match(String(record.created_at), TS_RE);
    assert.match(String(record.updated_at), TS_RE);

    assert.equal(messages.length, 6);
    const expected = responses.flatMap((r) => [
      { role: 'user', author: 'visitor', author_name: null, content: r.question, created_at: r.created_at, response_id: r.response_id, attachments: [] },
      { role: 'assistant', author: 'ai', author_name: null, content: r.answer, created_at: r.created_at, response_id: r.response_id, attachments: [] },
    ]);
    for (const m of messages) {
      assert.deepEqual(Object.keys(m).sort(), MESSAGE_KEYS);
      assert.match(m.message_id, UUID_RE);
    }
    assert.deepEqual(
      messages.map(({ message_id: _id, ...rest }: { message_id: string }) => rest),
      expected,
    );
    assert.equal(new Set(messages.map((m: { message_id: string }) => m.message_id)).size, 6, 'message ids are distinct');

    // Stable: the same message ids on a second read.
    const again = await get(`${V2}/conversation/${conv.conversation_id}`);
    assert.deepEqual(again.body, res.body);
  });

  it('returns a conversation without responses with an empty message list', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch!, status: 'Closed' });
    await importLines(acct.accountId, [conv]);
    const res = await api(server.url, acct.key)(`${V2}/conversation/${conv.conversation_id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ...expectedConversation(conv, [], acct.accountId), messages: [] });
  });

  it('matches the record of the conversation list', async () => {
    const { conv, get } = await accountWithConversation();
    const list = assertEnvelope(await get(`${V2}/conversation`));
    assert.equal(list.results.length, 1);
    const { messages: _m, ...detail } = (await get(`${V2}/conversation/${conv.conversation_id}`)).body;
    assert.deepEqual(detail, list.results[0]);
  });

  it('format=gridjs JSON-encodes the messages and keeps every other cell', async () => {
    const { conv, get } = await accountWithConversation();
    const plain = await get(`${V2}/conversation/${conv.conversation_id}`);
    const grid = await get(`${V2}/conversation/${conv.conversation_id}?format=gridjs`);
    assert.equal(grid.status, 200);
    assert.deepEqual(Object.keys(grid.body).sort(), Object.keys(plain.body).sort());
    for (const [k, v] of Object.entries(grid.body)) {
      assert.ok(typeof v === 'string' || typeof v === 'number', `${k} is ${typeof v}`);
      // gridjs cells: null is the empty string.
      if (k !== 'messages') assert.equal(v, plain.body[k] ?? '', k);
    }
    assert.equal(typeof grid.body.messages, 'string');
    assert.deepEqual(JSON.parse(grid.body.messages), plain.body.messages);
  });
});

describe('404 for ids the account cannot read', () => {
  function assertSameNotFound(a: ApiResult, b: ApiResult) {
    assertProblem(a, 404);
    assertProblem(b, 404);
    assert.equal(a.body.type, b.body.type);
    assert.equal(a.body.title, b.body.title);
    assert.deepEqual(Object.keys(a.body).sort(), Object.keys(b.body).sort());
  }

  it('answers unknown, malformed and other-account ids alike, revealing nothing', async () => {
    const mine = await accountWithConversation();
    const theirs = await accountWithConversation();
    const get = mine.get;
    const cases: Array<{ resource: string; foreign: string }> = [
      { resource: 'response', foreign: theirs.responses[0]!.response_id },
      { resource: 'conversation', foreign: theirs.conv.conversation_id },
    ];
    for (const c of cases) {
      const unknownId = randomUUID();
      const unknown = await get(`${V2}/${c.resource}/${unknownId}`);
      const foreign = await get(`${V2}/${c.resource}/${c.foreign}`);
      assertSameNotFound(unknown, foreign);
      // The detail differs only by the id the client sent.
      assert.equal(unknown.body.detail.replace(unknownId, '<id>'), foreign.body.detail.replace(c.foreign, '<id>'), c.resource);
      const foreignDetail = foreign.body.detail.replace(c.foreign, '<id>').toLowerCase();
      assert.doesNotMatch(foreignDetail, new RegExp(`\\b${theirs.acct.accountId}\\b`), 'detail names the owning account');
      for (const leak of [theirs.conv.title, 'another account', 'other account', 'forbidden', 'belongs', 'owner']) {
        assert.ok(!foreignDetail.includes(leak.toLowerCase()), `detail reveals "${leak}": ${foreign.body.detail}`);
      }
      assert.ok(!JSON.stringify(foreign.body).includes(theirs.conv.title));
      for (const malformed of ['not-a-uuid', '12345', `${unknownId}0`, unknownId.slice(0, -1), '%20', 'null']) {
        assertSameNotFound(await get(`${V2}/${c.resource}/${malformed}`), unknown);
      }
      // With format=gridjs too.
      assertSameNotFound(await get(`${V2}/${c.resource}/${c.foreign}?format=gridjs`), unknown);
    }
    // The other account still reads its own records.
    assert.equal((await theirs.get(`${V2}/conversation/${theirs.conv.conversation_id}`)).status, 200);
    assert.equal((await theirs.get(`${V2}/response/${theirs.responses[0]!.response_id}`)).status, 200);
  });
});
