/** Customer API v2 filters, text search and the exactness of counts (including after re-imports). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import {
  api,
  conversationLine,
  createTestAccount,
  importLines,
  newChannelIds,
  responseLine,
  type ConversationLine,
  type ResponseLine,
} from '../helpers/builders';
import {
  assertEnvelope,
  assertParamError,
  expectedConversation,
  expectedResponse,
  ids,
  linkParamSet,
  ts,
  V2,
  type Get,
  type Rec,
} from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

/** Every record of a filter (at most 100) and its count; the count must equal what is listed. */
async function listAll(get: Get, pathAndQuery: string): Promise<{ count: number; results: Rec[] }> {
  const sep = pathAndQuery.includes('?') ? '&' : '?';
  const body = assertEnvelope(await get(`${pathAndQuery}${sep}resultsPerPage=100`));
  assert.ok(body.count <= 100, 'test data stays on one page');
  assert.equal(body.count, body.results.length, `count of ${pathAndQuery} equals the records listed`);
  return body;
}

const sortedIds = (records: Rec[]) => ids(records).sort();

/** Three channels of the account with conversations and responses spread over them. */
async function accountWithChannels() {
  const acct = await createTestAccount();
  const [a, b, c] = (await newChannelIds(3)) as [number, number, number];
  const conversations = [a, a, b, c, c, c].map((ch, i) => conversationLine({ channel_id: ch, created_at: ts(i), title: `Conv ${i}` }));
  const responses: ResponseLine[] = [];
  conversations.forEach((conv, i) => {
    for (let j = 0; j <= i % 3; j++) responses.push(responseLine(conv, { created_at: ts(100 + responses.length) }));
  });
  await importLines(acct.accountId, [...conversations, ...responses]);
  return { acct, a, b, c, conversations, responses, get: api(server.url, acct.key) };
}

describe('channel filters', () => {
  it('filters both lists by channel_id, repeated channel_ids[] (raw or percent-encoded) and their union', async () => {
    const { a, b, c, conversations, responses, get } = await accountWithChannels();
    const cases: Array<{ q: string; channels: number[] }> = [
      { q: `channel_id=${a}`, channels: [a] },
      { q: `channel_id=${c}`, channels: [c] },
      { q: `channel_ids[]=${b}`, channels: [b] },
      { q: `channel_ids[]=${a}&channel_ids[]=${b}`, channels: [a, b] },
      { q: `channel_ids%5B%5D=${a}&channel_ids%5B%5D=${c}`, channels: [a, c] },
      { q: `channel_ids%5b%5d=${b}&channel_ids[]=${c}`, channels: [b, c] },
      { q: `channel_id=${a}&channel_ids[]=${c}`, channels: [a, c] },
      { q: `channel_id=${a}&channel_ids[]=${b}&channel_ids[]=${c}`, channels: [a, b, c] },
      { q: `channel_id=${a}&channel_ids[]=${a}`, channels: [a] },
      { q: `channel_ids[]=${b}&channel_ids[]=${b}&channel_ids[]=${b}`, channels: [b] },
      { q: `channel_ids[]=${b}&channel_ids[]=`, channels: [b] },
    ];
    for (const k of cases) {
      const wantResponses = responses
        .filter((r) => k.channels.includes(r.channel_id))
        .map((r) => r.response_id)
        .sort();
      const wantConversations = conversations
        .filter((cv) => k.channels.includes(cv.channel_id))
        .map((cv) => cv.conversation_id)
        .sort();
      assert.ok(wantResponses.length > 0);
      assert.deepEqual(sortedIds((await listAll(get, `${V2}/response?${k.q}`)).results), wantResponses, `/response?${k.q}`);
      assert.deepEqual(sortedIds((await listAll(get, `${V2}/conversation?${k.q}`)).results), wantConversations, `/conversation?${k.q}`);
    }
  });

  it('returns nothing (count 0) for a channel the account does not have', async () => {
    const { get } = await accountWithChannels();
    const [unused] = await newChannelIds(1);
    for (const path of ['/response', '/conversation']) {
      for (const q of [`channel_id=${unused}`, `channel_ids[]=${unused}`, 'channel_id=2147483647']) {
        const body = assertEnvelope(await get(`${V2}${path}?${q}`));
        assert.deepEqual({ count: body.count, results: body.results }, { count: 0, results: [] }, `${path}?${q}`);
      }
    }
  });

  it('rejects channel ids that are not integers, on both lists', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    const bad = ['abc', '1.5', '1e3', '12abc', '0x10', '1,2'];
    for (const path of ['/response', '/conversation']) {
      for (const v of bad) {
        assertParamError(await get(`${V2}${path}?channel_id=${v}`), 'channel_id');
        assertParamError(await get(`${V2}${path}?channel_ids[]=${v}`), 'channel_ids[]');
        assertParamError(await get(`${V2}${path}?channel_ids%5B%5D=1&channel_ids%5B%5D=${v}`), 'channel_ids[]');
      }
    }
  });

  it('answers integers that cannot be channel ids with a 400 naming the parameter or an empty page, never a 500', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    for (const path of ['/response', '/conversation']) {
      for (const v of ['0', '-3', '99999999999999', '2147483648']) {
        for (const param of ['channel_id', 'channel_ids[]']) {
          const res = await get(`${V2}${path}?${param}=${v}`);
          if (res.status === 400) assertParamError(res, param);
          else assert.deepEqual({ ...assertEnvelope(res) }, { count: 0, next: null, previous: null, results: [] }, `${path}?${param}=${v}`);
        }
      }
    }
  });
});

describe('conversation_id filter on /response', () => {
  it('restricts to one conversation, alone and combined with channel filters', async () => {
    const { a, b, conversations, responses, get } = await accountWithChannels();
    const target = conversations[1]!; // channel a, two responses
    const inTarget = responses
      .filter((r) => r.conversation_id === target.conversation_id)
      .map((r) => r.response_id)
      .sort();
    assert.equal(inTarget.length, 2);
    const cases: Array<{ q: string; want: string[] }> = [
      { q: `conversation_id=${target.conversation_id}`, want: inTarget },
      { q: `conversation_id=${target.conversation_id.toUpperCase()}`, want: inTarget },
      { q: `conversation_id=${target.conversation_id}&channel_id=${a}`, want: inTarget },
      { q: `conversation_id=${target.conversation_id}&channel_ids[]=${b}&channel_ids[]=${a}`, want: inTarget },
      { q: `conversation_id=${target.conversation_id}&channel_id=${b}`, want: [] },
      { q: `conversation_id=${conversations[0]!.conversation_id}&channel_id=${a}`, want: [responses[0]!.response_id] },
      { q: `conversation_id=${randomUUID()}`, want: [] },
    ];
    for (const k of cases) {
      assert.deepEqual(sortedIds((await listAll(get, `${V2}/response?${k.q}`)).results), k.want, k.q);
    }
  });

  it('rejects a conversation_id that is not a UUID', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    for (const v of ['abc', '123', '00000000-0000-0000-0000-00000000000', '00000000-0000-0000-0000-0000000000000', 'g0000000-0000-0000-0000-000000000000']) {
      assertParamError(await get(`${V2}/response?conversation_id=${v}`), 'conversation_id');
    }
  });

  it('is not a parameter of /conversation (ignored like any unknown parameter)', async () => {
    const { conversations, get } = await accountWithChannels();
    const body = await listAll(get, `${V2}/conversation?conversation_id=not-a-uuid`);
    assert.equal(body.count, conversations.length);
  });
});

describe('declined filter on /response (docs/contracts.md §15)', () => {
  it('lists, counts, links, reads by id and exports the stored flag; declined=true|false filters', async () => {
    const { acct, a, responses, get } = await accountWithChannels();
    const declined = responses.filter((_, i) => i % 3 === 0);
    const db = await getDb();
    for (const r of declined) await db.execute(sql`UPDATE responses SET declined = true WHERE id = ${r.response_id}`);
    const isDeclined = (r: ResponseLine) => declined.includes(r);
    const cases: Array<[string, ResponseLine[]]> = [
      ['declined=true', declined],
      ['declined=false', responses.filter((r) => !isDeclined(r))],
      [`declined=true&channel_id=${a}`, declined.filter((r) => r.channel_id === a)],
      [
        `declined=false&conversation_id=${responses[0]!.conversation_id}`,
        responses.filter((r) => !isDeclined(r) && r.conversation_id === responses[0]!.conversation_id),
      ],
      ['declined=', responses],
    ];
    for (const [q, want] of cases) {
      const body = await listAll(get, `${V2}/response?${q}`);
      assert.deepEqual(sortedIds(body.results), want.map((r) => r.response_id).sort(), q);
      for (const rec of body.results)
        assert.equal(
          rec.declined,
          declined.some((r) => r.response_id === rec.response_id),
          q,
        );
    }
    const page = assertEnvelope(await get(`${V2}/response?declined=true&resultsPerPage=1`));
    assert.equal(page.count, declined.length);
    assert.ok(linkParamSet(page.next).includes('declined=true'), 'the next link keeps the filter');
    const one = await get(`${V2}/response/${declined[0]!.response_id}`);
    assert.equal((one.body as Rec).declined, true);
    const cells = await get(`${V2}/response/${declined[0]!.response_id}?format=gridjs`);
    assert.equal((cells.body as Rec).declined, 'true');
    const exported = await fetch(`${server.url}${V2}/response/export?declined=true`, { headers: { authorization: `Bearer ${acct.key}` } });
    const lines = (await exported.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Rec);
    assert.deepEqual(lines.map((l) => l.response_id).sort(), declined.map((r) => r.response_id).sort());
    assert.ok(lines.every((l) => l.declined === true));
  });

  it('rejects values other than true and false with a 400 naming declined, on the list and the export', async () => {
    const { get } = await accountWithChannels();
    for (const v of ['yes', '1', '0', 'TRUE', 'False', 'true ', 'null']) {
      assertParamError(await get(`${V2}/response?declined=${encodeURIComponent(v)}`), 'declined');
      assertParamError(await get(`${V2}/response/export?declined=${encodeURIComponent(v)}`), 'declined');
    }
  });
});

describe('query (text search)', () => {
  it('/response: case-insensitive substring over question and answer, Unicode letters included', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch!, title: 'café everywhere' });
    const mk = (question: string, answer: string) => responseLine(conv, { question, answer });
    const r = {
      cafeUpperQ: mk('Where is the CAFÉ?', 'Downstairs.'),
      cafeLowerA: mk('Coffee?', 'The café is open.'),
      cafeMixed: mk('Le Café', 'oui'),
      cafeNoAccent: mk('A cafe without accent', 'plain'),
      straße: mk('Which STRASSE?', 'Die Straße ist lang.'),
      greek: mk('ΟΔΥΣΣΕΥΣ', 'x'),
      hello: mk('HeLLo there', 'General Kenobi'),
      pct: mk('Save 50% today', 'ok'),
      fiveHundred: mk('We have 500 users', 'ok'),
      underscore: mk('snake a_b case', 'ok'),
      axb: mk('axb and a-b', 'ok'),
      backslash: mk('path C:\\temp\\x', 'ok'),
    };
    await importLines(acct.accountId, [conv, ...Object.values(r)]);
    const get = api(server.url, acct.key);
    const cases: Array<{ query: string; want: ResponseLine[] }> = [
      { query: 'café', want: [r.cafeUpperQ, r.cafeLowerA, r.cafeMixed] },
      { query: 'CAFÉ', want: [r.cafeUpperQ, r.cafeLowerA, r.cafeMixed] },
      { query: 'Café', want: [r.cafeUpperQ, r.cafeLowerA, r.cafeMixed] },
      { query: 'cafe', want: [r.cafeNoAccent] },
      { query: 'straße', want: [r.straße] },
      { query: 'οδυσσευσ', want: [r.greek] },
      { query: 'hello', want: [r.hello] },
      { query: 'KENOBI', want: [r.hello] },
      { query: '50%', want: [r.pct] },
      { query: '%', want: [r.pct] },
      { query: 'a_b', want: [r.underscore] },
      { query: '_', want: [r.underscore] },
      { query: 'C:\\temp', want: [r.backslash] },
      { query: '\\', want: [r.backslash] },
      { query: 'nothing matches this', want: [] },
    ];
    for (const k of cases) {
      const body = await listAll(get, `${V2}/response?query=${encodeURIComponent(k.query)}`);
      assert.deepEqual(sortedIds(body.results), k.want.map((x) => x.response_id).sort(), `query=${k.query}`);
      if (k.want.length > 0) assert.deepEqual(body.results.map((x) => x.question).sort(), k.want.map((x) => x.question).sort());
    }
  });

  it('/conversation: case-insensitive substring over title and channel_name', async () => {
    const acct = await createTestAccount();
    const [support, sales] = (await newChannelIds(2)) as [number, number];
    const c1 = conversationLine({ channel_id: support, channel_name: 'Support DESK', title: 'Billing problem' });
    const c2 = conversationLine({ channel_id: support, channel_name: 'Support DESK', title: 'Login issue' });
    const c3 = conversationLine({ channel_id: sales, channel_name: 'Sales', title: 'Pricing for the ÉCOLE desk' });
    const c4 = conversationLine({ channel_id: sales, channel_name: 'Sales', title: '100% refund a_b' });
    const c5 = conversationLine({ channel_id: sales, channel_name: 'Sales', title: '1000 refunds axb' });
    // Responses whose text matches must not make a conversation match: /conversation searches title and channel name.
    const rsp = responseLine(c5, { question: 'billing?', answer: 'support desk' });
    await importLines(acct.accountId, [c1, c2, c3, c4, c5, rsp]);
    const get = api(server.url, acct.key);
    const cases: Array<{ query: string; want: ConversationLine[] }> = [
      { query: 'desk', want: [c1, c2, c3] },
      { query: 'SUPPORT', want: [c1, c2] },
      { query: 'billing', want: [c1] },
      { query: 'école', want: [c3] },
      { query: 'sales', want: [c3, c4, c5] },
      { query: '100%', want: [c4] },
      { query: 'a_b', want: [c4] },
      { query: 'kenobi', want: [] },
    ];
    for (const k of cases) {
      const body = await listAll(get, `${V2}/conversation?query=${encodeURIComponent(k.query)}`);
      assert.deepEqual(sortedIds(body.results), k.want.map((x) => x.conversation_id).sort(), `query=${k.query}`);
    }
  });

  it('combines with filters, with an exact count on every page', async () => {
    const acct = await createTestAccount();
    const [a, b] = (await newChannelIds(2)) as [number, number];
    const ca = conversationLine({ channel_id: a, title: 'needle in a' });
    const cb = conversationLine({ channel_id: b, title: 'needle in b' });
    const rs: ResponseLine[] = [];
    for (let i = 0; i < 20; i++) {
      rs.push(responseLine(i % 2 ? ca : cb, { question: i % 4 < 2 ? `Needle ${i}` : `hay ${i}`, created_at: ts(i) }));
    }
    await importLines(acct.accountId, [ca, cb, ...rs]);
    const get = api(server.url, acct.key);
    const needles = rs.filter((r) => r.question.startsWith('Needle'));
    const cases: Array<{ q: string; want: ResponseLine[] }> = [
      { q: 'query=needle', want: needles },
      { q: `query=needle&channel_id=${a}`, want: needles.filter((r) => r.channel_id === a) },
      { q: `query=NEEDLE&channel_ids[]=${b}`, want: needles.filter((r) => r.channel_id === b) },
      { q: `query=needle&conversation_id=${ca.conversation_id}`, want: needles.filter((r) => r.conversation_id === ca.conversation_id) },
      { q: `query=needle&conversation_id=${ca.conversation_id}&channel_id=${b}`, want: [] },
      { q: `query=hay&channel_id=${a}&channel_ids[]=${b}`, want: rs.filter((r) => r.question.startsWith('hay')) },
    ];
    for (const k of cases) {
      const want = [...k.want].reverse().map((r) => r.response_id);
      const page1 = assertEnvelope(await get(`${V2}/response?${k.q}&resultsPerPage=3`));
      assert.equal(page1.count, want.length, k.q);
      assert.deepEqual(ids(page1.results), want.slice(0, 3), k.q);
      const page2 = assertEnvelope(await get(`${V2}/response?${k.q}&resultsPerPage=3&page=2`));
      assert.equal(page2.count, want.length, k.q);
      assert.deepEqual(ids(page2.results), want.slice(3, 6), k.q);
    }
    const convs = await listAll(get, `${V2}/conversation?query=needle&channel_id=${b}`);
    assert.deepEqual(ids(convs.results), [cb.conversation_id]);
    const convLinks = assertEnvelope(await get(`${V2}/conversation?query=needle&resultsPerPage=1`));
    assert.equal(convLinks.count, 2);
    assert.deepEqual(linkParamSet(convLinks.next), ['page=2', 'query=needle', 'resultsPerPage=1']);
  });

  it('answers a query containing a NUL character as an invalid parameter or a search without matches, never a 500', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch!, title: 'a b' });
    await importLines(acct.accountId, [conv, responseLine(conv, { question: 'a b', answer: 'a b' })]);
    const get = api(server.url, acct.key);
    for (const path of ['/response', '/conversation']) {
      for (const q of ['%00', 'a%00b', `a%00b&channel_id=${ch}`]) {
        const res = await get(`${V2}${path}?query=${q}`);
        // Stored text can never contain NUL (the importer refuses it), so nothing can match.
        if (res.status === 400) assertParamError(res, 'query');
        else assert.deepEqual(assertEnvelope(res), { count: 0, next: null, previous: null, results: [] }, `${path}?query=${q}: ${JSON.stringify(res.body)}`);
      }
    }
  });

  it('rejects an overlong query rather than failing', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    // Not in the contract's list, but it must be a 400 naming `query` or a normal 200, never a 500.
    const res = await get(`${V2}/response?query=${'x'.repeat(5000)}`);
    if (res.status === 400) assertParamError(res, 'query');
    else assert.equal(assertEnvelope(res).count, 0);
  });
});

describe('counts', () => {
  /** Every count the API gives for this account, checked against the records it lists. */
  async function assertCounts(get: Get, accountId: number, convs: ConversationLine[], rs: ResponseLine[]) {
    const all = await listAll(get, `${V2}/response`);
    assert.deepEqual(
      all.results.map((x) => x).sort((x, y) => String(x.id).localeCompare(String(y.id))),
      rs.map(expectedResponse).sort((x, y) => String(x.id).localeCompare(String(y.id))),
    );
    const allConvs = await listAll(get, `${V2}/conversation`);
    assert.deepEqual(
      allConvs.results.sort((x, y) => String(x.id).localeCompare(String(y.id))),
      convs.map((c) => expectedConversation(c, rs, accountId)).sort((x, y) => String(x.id).localeCompare(String(y.id))),
    );
    for (const ch of [...new Set(convs.map((c) => c.channel_id))]) {
      const byChannel = await listAll(get, `${V2}/response?channel_id=${ch}`);
      assert.deepEqual(
        sortedIds(byChannel.results),
        rs
          .filter((r) => r.channel_id === ch)
          .map((r) => r.response_id)
          .sort(),
        `responses of channel ${ch}`,
      );
      const convsByChannel = await listAll(get, `${V2}/conversation?channel_ids[]=${ch}`);
      assert.deepEqual(
        sortedIds(convsByChannel.results),
        convs
          .filter((c) => c.channel_id === ch)
          .map((c) => c.conversation_id)
          .sort(),
        `conversations of channel ${ch}`,
      );
    }
    for (const c of convs) {
      const byConv = await listAll(get, `${V2}/response?conversation_id=${c.conversation_id}`);
      assert.deepEqual(
        sortedIds(byConv.results),
        rs
          .filter((r) => r.conversation_id === c.conversation_id)
          .map((r) => r.response_id)
          .sort(),
        `responses of conversation ${c.title}`,
      );
      const detail = await get(`${V2}/conversation/${c.conversation_id}`);
      assert.equal(detail.status, 200);
      assert.equal(detail.body.response_count, byConv.count);
      assert.equal(detail.body.messages.length, 2 * byConv.count);
    }
  }

  it('stay exact for unfiltered, channel and conversation totals across re-imports that move records', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    const [a, b] = (await newChannelIds(2)) as [number, number];
    const x = conversationLine({ channel_id: a, title: 'X' });
    const y = conversationLine({ channel_id: a, title: 'Y' });
    const z = conversationLine({ channel_id: b, title: 'Z' });
    const empty = conversationLine({ channel_id: b, title: 'Empty' });
    const r1 = responseLine(x, { created_at: ts(1) });
    const r2 = responseLine(x, { created_at: ts(2) });
    const r3 = responseLine(x, { created_at: ts(3) });
    const r4 = responseLine(y, { created_at: ts(4) });
    const r5 = responseLine(z, { created_at: ts(5) });
    const first = [x, y, z, empty, r1, r2, r3, r4, r5];
    await importLines(acct.accountId, first);
    await assertCounts(get, acct.accountId, [x, y, z, empty], [r1, r2, r3, r4, r5]);

    // The same file again changes nothing.
    await importLines(acct.accountId, first);
    await assertCounts(get, acct.accountId, [x, y, z, empty], [r1, r2, r3, r4, r5]);

    // r1 moves to Y (same channel), r2 to Z (channel b): conversations and channels change totals.
    const r1b = { ...r1, conversation_id: y.conversation_id };
    const r2b = { ...r2, conversation_id: z.conversation_id, channel_id: b };
    await importLines(acct.accountId, [r1b, r2b]);
    await assertCounts(get, acct.accountId, [x, y, z, empty], [r1b, r2b, r3, r4, r5]);

    // Y moves to channel b with all of its responses; a new response lands in the empty conversation.
    const yb = { ...y, channel_id: b, channel_name: 'Channel b renamed' };
    const zRenamed = { ...z, channel_name: 'Channel b renamed' };
    const r1c = { ...r1b, channel_id: b };
    const r4b = { ...r4, channel_id: b };
    const r6 = responseLine(empty, { created_at: ts(6) });
    await importLines(acct.accountId, [yb, r1c, r4b, r6]);
    await assertCounts(get, acct.accountId, [x, yb, zRenamed, { ...empty, channel_name: 'Channel b renamed' }], [r1c, r2b, r3, r4b, r5, r6]);

    // Unions of channels add up.
    const union = await listAll(get, `${V2}/response?channel_id=${a}&channel_ids[]=${b}`);
    assert.equal(union.count, 6);
    const convUnion = await listAll(get, `${V2}/conversation?channel_ids[]=${a}&channel_ids[]=${b}`);
    assert.equal(convUnion.count, 4);
  });

  it('are not affected by another account importing', async () => {
    const one = await accountWithChannels();
    const before = await listAll(one.get, `${V2}/response`);
    const other = await accountWithChannels();
    await importLines(other.acct.accountId, [responseLine(other.conversations[0]!)]);
    const afterwards = await listAll(one.get, `${V2}/response`);
    assert.equal(afterwards.count, before.count);
    assert.equal(before.count, one.responses.length);
  });
});
