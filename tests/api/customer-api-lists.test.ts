/** Customer API v2 list operations: envelope, links, aliases, paging, sorting, page walks, gridjs. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
  parseLink,
  totalOrder,
  ts,
  V2,
  walkPages,
  type Direction,
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

/** One channel, one conversation, `n` responses with distinct created_at (record i is i minutes in). */
async function accountWithResponses(n: number) {
  const acct = await createTestAccount();
  const [ch] = await newChannelIds(1);
  const conv = conversationLine({ channel_id: ch! });
  const responses = Array.from({ length: n }, (_, i) => responseLine(conv, { created_at: ts(i * 60), question: `Q${i}` }));
  await importLines(acct.accountId, [conv, ...responses]);
  return { acct, ch: ch!, conv, responses, get: api(server.url, acct.key) };
}

/**
 * Three channels, six conversations, 24 responses, with ties in every sortable field so the
 * tie-break by id is exercised for each order_by.
 */
async function accountForSorting() {
  const acct = await createTestAccount();
  const channels = await newChannelIds(3);
  const conversations: ConversationLine[] = [];
  for (let i = 0; i < 6; i++) {
    conversations.push(
      conversationLine({
        channel_id: channels[i % 3]!,
        title: `Conversation ${i}`,
        created_at: ts([0, 3600, 7200][i % 3]!),
        updated_at: ts(10_000 + [0, 60][i % 2]!),
      }),
    );
  }
  const perConversation = [0, 2, 2, 5, 7, 8];
  const responses: ResponseLine[] = [];
  conversations.forEach((c, ci) => {
    for (let j = 0; j < perConversation[ci]!; j++) {
      const i = responses.length;
      responses.push(
        responseLine(c, {
          created_at: ts([0, 60, 120, 180][i % 4]!),
          likes: i % 3,
          dislikes: (i * 7) % 4,
          comments: i % 2,
          question: `Q${i}`,
        }),
      );
    }
  });
  await importLines(acct.accountId, [...conversations, ...responses]);
  return { acct, channels, conversations, responses, get: api(server.url, acct.key) };
}

describe('list envelope and defaults', () => {
  it('returns count/next/previous/results with 15 records per page, newest first, and relative links', async () => {
    const { responses, get } = await accountWithResponses(17);
    const newestFirst = [...responses].reverse();
    const page1 = assertEnvelope(await get(`${V2}/response`));
    assert.equal(page1.count, 17);
    assert.deepEqual(page1.results, newestFirst.slice(0, 15).map(expectedResponse));
    assert.equal(page1.previous, null);
    assert.deepEqual(linkParamSet(page1.next), ['page=2', 'resultsPerPage=15']);
    assert.equal(parseLink(page1.next!).path, `${V2}/response`);

    const page2 = assertEnvelope(await get(page1.next!));
    assert.equal(page2.count, 17);
    assert.deepEqual(page2.results, newestFirst.slice(15).map(expectedResponse));
    assert.equal(page2.next, null);
    assert.deepEqual(linkParamSet(page2.previous), ['page=1', 'resultsPerPage=15']);
  });

  it('lists conversations with the same envelope and defaults', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const convs = Array.from({ length: 16 }, (_, i) => conversationLine({ channel_id: ch!, created_at: ts(i * 60), title: `T${i}` }));
    await importLines(acct.accountId, convs);
    const get = api(server.url, acct.key);
    const page1 = assertEnvelope(await get(`${V2}/conversation`));
    assert.equal(page1.count, 16);
    assert.deepEqual(
      page1.results,
      [...convs]
        .reverse()
        .slice(0, 15)
        .map((c) => expectedConversation(c, [], acct.accountId)),
    );
    assert.equal(page1.previous, null);
    assert.equal(parseLink(page1.next!).path, `${V2}/conversation`);
    assert.deepEqual(linkParamSet(page1.next), ['page=2', 'resultsPerPage=15']);
    const page2 = assertEnvelope(await get(page1.next!));
    assert.deepEqual(ids(page2.results), [convs[0]!.conversation_id]);
    assert.equal(page2.next, null);
  });

  it('answers an account without records with count 0 and no links', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    for (const path of ['/response', '/conversation']) {
      const body = assertEnvelope(await get(`${V2}${path}`));
      assert.deepEqual(body, { count: 0, next: null, previous: null, results: [] }, path);
    }
  });

  it('answers a page past the last with 200, no results, the true count, no next and previous = page - 1', async () => {
    const { get } = await accountWithResponses(12);
    const cases: Array<{ query: string; previousPage: string }> = [
      { query: 'page=3&resultsPerPage=10', previousPage: '2' },
      { query: 'page=7&resultsPerPage=10', previousPage: '6' },
      { query: 'page=2147483647', previousPage: '2147483646' },
    ];
    for (const c of cases) {
      for (const path of ['/response', '/conversation']) {
        const body = assertEnvelope(await get(`${V2}${path}?${c.query}`));
        assert.deepEqual(body.results, [], `${path}?${c.query}`);
        assert.equal(body.count, path === '/response' ? 12 : 1, `${path}?${c.query}`);
        assert.equal(body.next, null, `${path}?${c.query}`);
        assert.equal(new URL(body.previous!, 'http://x').searchParams.get('page'), c.previousPage, `${path}?${c.query}`);
      }
    }
  });

  it('treats any integer page beyond the last as a page past the last, however large', async () => {
    // docs/contracts.md §4: page is invalid only when < 1 or not an integer; a page past the last is a 200.
    const { get } = await accountWithResponses(3);
    for (const page of ['2147483648', '99999999999', '12345678901234567890']) {
      const res = await get(`${V2}/response?page=${page}&resultsPerPage=2`);
      const body = assertEnvelope(res);
      assert.deepEqual({ count: body.count, next: body.next, results: body.results }, { count: 3, next: null, results: [] }, `page=${page}`);
      assert.equal(new URL(body.previous!, 'http://x').searchParams.get('page'), (BigInt(page) - 1n).toString(), `page=${page}`);
    }
  });

  it('accepts resultsPerPage (and pageSize) from 1 to 100', async () => {
    const { responses, get } = await accountWithResponses(101);
    const newestFirst = [...responses].reverse().map((r) => r.response_id);
    for (const [param, size] of [
      ['resultsPerPage', 1],
      ['resultsPerPage', 100],
      ['pageSize', 1],
      ['pageSize', 100],
      ['resultsPerPage', 37],
    ] as const) {
      const body = assertEnvelope(await get(`${V2}/response?${param}=${size}`));
      assert.equal(body.count, 101);
      assert.deepEqual(ids(body.results), newestFirst.slice(0, size), `${param}=${size}`);
      assert.deepEqual(linkParamSet(body.next), ['page=2', `resultsPerPage=${size}`].sort(), `${param}=${size}`);
    }
    const last = assertEnvelope(await get(`${V2}/response?resultsPerPage=100&page=2`));
    assert.deepEqual(ids(last.results), newestFirst.slice(100));
    assert.equal(last.next, null);
  });

  it('rejects page sizes outside 1-100 or not integers, naming the parameter as the client spelled it', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    const bad = ['0', '101', '1.5', 'abc', '-1', '1e2'];
    for (const path of ['/response', '/conversation']) {
      for (const param of ['resultsPerPage', 'pageSize']) {
        for (const value of bad) {
          const res = await get(`${V2}${path}?${param}=${encodeURIComponent(value)}`);
          assertParamError(res, param);
        }
      }
      for (const value of ['0', '-1', '1.5', 'abc']) assertParamError(await get(`${V2}${path}?page=${value}`), 'page');
    }
  });
});

describe('next and previous links', () => {
  it('carry the canonical name of every recognised parameter, page replaced, always resultsPerPage, no unknown ones', async () => {
    const acct = await createTestAccount();
    const [a, b] = await newChannelIds(2);
    const convA = conversationLine({ channel_id: a!, title: 'hello a' });
    const convB = conversationLine({ channel_id: b!, title: 'hello b' });
    const lines: object[] = [convA, convB];
    for (let i = 0; i < 9; i++) lines.push(responseLine(i % 2 ? convA : convB, { question: `hello ${i}`, created_at: ts(i) }));
    await importLines(acct.accountId, lines);
    const get = api(server.url, acct.key);

    const rq = `pageSize=2&page=2&sortBy=likes&sortOrder=asc&channel_id=${a}&channel_ids[]=${b}&query=hello&format=gridjs&bogus=1&api_key=x`;
    const body = assertEnvelope(await get(`${V2}/response?${rq}`));
    assert.equal(body.count, 9);
    const common = ['resultsPerPage=2', 'order_by=likes', `channel_id=${a}`, `channel_ids[]=${b}`, 'query=hello', 'format=gridjs'];
    const norm = (set: string[]) => set.map((p) => (p.startsWith('sort=') ? `sort=${p.slice(5).toUpperCase()}` : p));
    assert.deepEqual(norm(linkParamSet(body.next)), ['page=3', 'sort=ASC', ...common].sort());
    assert.deepEqual(norm(linkParamSet(body.previous)), ['page=1', 'sort=ASC', ...common].sort());

    const cq = `sortBy=response_count&sortOrder=DESC&channel_ids%5B%5D=${a}&channel_ids%5B%5D=${b}&query=hello&resultsPerPage=1&conversation_id=ignored&x=y`;
    const cbody = assertEnvelope(await get(`${V2}/conversation?${cq}`));
    assert.equal(cbody.count, 2);
    assert.deepEqual(
      norm(linkParamSet(cbody.next)),
      ['page=2', 'resultsPerPage=1', 'order_by=response_count', 'sort=DESC', `channel_ids[]=${a}`, `channel_ids[]=${b}`, 'query=hello'].sort(),
    );

    const withConv = assertEnvelope(await get(`${V2}/response?conversation_id=${convA.conversation_id}&resultsPerPage=1`));
    assert.deepEqual(linkParamSet(withConv.next), ['page=2', 'resultsPerPage=1', `conversation_id=${convA.conversation_id}`].sort());
  });

  it('keep special characters of query when followed', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    const matching = [0, 1, 2].map((i) => responseLine(conv, { question: `save 50% & more + tax #${i}`, created_at: ts(i) }));
    await importLines(acct.accountId, [conv, ...matching, responseLine(conv, { question: 'save 500 & more + tax' })]);
    const get = api(server.url, acct.key);
    const q = encodeURIComponent('50% & more + tax');
    const walked = await walkPages(get, `${V2}/response?query=${q}&resultsPerPage=1`);
    assert.deepEqual(
      ids(walked.records),
      [...matching].reverse().map((r) => r.response_id),
    );
    assert.deepEqual(walked.counts, [3, 3, 3]);
  });

  it('resolve aliases and duplicates: canonical wins, first value of a repeated name, empty means absent', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    const rs = Array.from({ length: 6 }, (_, i) => responseLine(conv, { created_at: ts(i), likes: (i * 5) % 6, dislikes: i }));
    await importLines(acct.accountId, [conv, ...rs]);
    const get = api(server.url, acct.key);
    const order = (key: string, dir: Direction) => totalOrder(rs.map(expectedResponse), key, 'id', dir).map((r) => String(r.id));

    const cases: Array<{ q: string; size: number; key: string; dir: Direction; link: string[] }> = [
      { q: 'resultsPerPage=2&pageSize=5', size: 2, key: 'created_at', dir: 'DESC', link: ['resultsPerPage=2'] },
      { q: 'pageSize=5&resultsPerPage=2', size: 2, key: 'created_at', dir: 'DESC', link: ['resultsPerPage=2'] },
      { q: 'resultsPerPage=2&pageSize=abc', size: 2, key: 'created_at', dir: 'DESC', link: ['resultsPerPage=2'] },
      { q: 'order_by=likes&sortBy=dislikes', size: 15, key: 'likes', dir: 'DESC', link: ['order_by=likes', 'resultsPerPage=15'] },
      { q: 'sortBy=dislikes&order_by=likes', size: 15, key: 'likes', dir: 'DESC', link: ['order_by=likes', 'resultsPerPage=15'] },
      { q: 'order_by=likes&sortBy=nonsense', size: 15, key: 'likes', dir: 'DESC', link: ['order_by=likes', 'resultsPerPage=15'] },
      { q: 'sort=ASC&sortOrder=DESC', size: 15, key: 'created_at', dir: 'ASC', link: ['sort=ASC', 'resultsPerPage=15'] },
      { q: 'sort=asc&sortOrder=sideways', size: 15, key: 'created_at', dir: 'ASC', link: ['sort=ASC', 'resultsPerPage=15'] },
      { q: 'sortOrder=ASC', size: 15, key: 'created_at', dir: 'ASC', link: ['sort=ASC', 'resultsPerPage=15'] },
      { q: 'resultsPerPage=2&resultsPerPage=5', size: 2, key: 'created_at', dir: 'DESC', link: ['resultsPerPage=2'] },
      { q: 'resultsPerPage=2&resultsPerPage=abc', size: 2, key: 'created_at', dir: 'DESC', link: ['resultsPerPage=2'] },
      { q: 'sort=ASC&sort=DESC', size: 15, key: 'created_at', dir: 'ASC', link: ['sort=ASC', 'resultsPerPage=15'] },
      { q: 'order_by=dislikes&order_by=bogus', size: 15, key: 'dislikes', dir: 'DESC', link: ['order_by=dislikes', 'resultsPerPage=15'] },
      { q: 'resultsPerPage=&pageSize=3', size: 3, key: 'created_at', dir: 'DESC', link: ['resultsPerPage=3'] },
      { q: 'resultsPerPage=', size: 15, key: 'created_at', dir: 'DESC', link: ['resultsPerPage=15'] },
      {
        q: 'order_by=&sort=&query=&format=&channel_id=&conversation_id=&page=&channel_ids[]=',
        size: 15,
        key: 'created_at',
        dir: 'DESC',
        link: ['resultsPerPage=15'],
      },
    ];
    for (const c of cases) {
      const body = assertEnvelope(await get(`${V2}/response?${c.q}&page=1`));
      assert.equal(body.count, 6, c.q);
      assert.deepEqual(ids(body.results), order(c.key, c.dir).slice(0, c.size), c.q);
      // A second request for page 2 shows the links the API derived from this query.
      const p2 = assertEnvelope(await get(`${V2}/response?${c.q.replace(/(^|&)page=[^&]*/g, '')}&page=2`));
      const canon = linkParamSet(p2.previous).map((p) => (p.startsWith('sort=') ? `sort=${p.slice(5).toUpperCase()}` : p));
      assert.deepEqual(canon, ['page=1', ...c.link].sort(), c.q);
    }
  });
});

describe('sorting', () => {
  const responseKeys = ['response_id', 'id', 'channel_id', 'conversation_id', 'created_at', 'likes', 'dislikes', 'comments'];
  const conversationKeys = ['conversation_id', 'id', 'channel_id', 'created_at', 'updated_at', 'response_count'];
  const spellings: Array<[string, Direction]> = [
    ['ASC', 'ASC'],
    ['asc', 'ASC'],
    ['Asc', 'ASC'],
    ['DESC', 'DESC'],
    ['desc', 'DESC'],
    ['dEsC', 'DESC'],
  ];

  it('orders /response by every allowed order_by, both directions, ties broken by id in the same direction', async (t) => {
    const { responses, get } = await accountForSorting();
    const expected = responses.map(expectedResponse);
    for (const key of responseKeys) {
      for (const [spelled, dir] of spellings) {
        await t.test(`order_by=${key}&sort=${spelled}`, async () => {
          const body = assertEnvelope(await get(`${V2}/response?order_by=${key}&sort=${spelled}&resultsPerPage=100`));
          assert.equal(body.count, expected.length);
          assert.deepEqual(body.results, totalOrder(expected, key, 'id', dir));
        });
      }
      await t.test(`sortBy=${key} (alias), default direction DESC`, async () => {
        const body = assertEnvelope(await get(`${V2}/response?sortBy=${key}&resultsPerPage=100`));
        assert.deepEqual(ids(body.results), ids(totalOrder(expected, key, 'id', 'DESC')));
      });
    }
  });

  it('orders /conversation by every allowed order_by, both directions, ties broken by id in the same direction', async (t) => {
    const { acct, conversations, responses, get } = await accountForSorting();
    const expected = conversations.map((c) => expectedConversation(c, responses, acct.accountId));
    for (const key of conversationKeys) {
      for (const [spelled, dir] of spellings) {
        await t.test(`order_by=${key}&sort=${spelled}`, async () => {
          const body = assertEnvelope(await get(`${V2}/conversation?order_by=${key}&sort=${spelled}&resultsPerPage=100`));
          assert.equal(body.count, expected.length);
          assert.deepEqual(body.results, totalOrder(expected, key, 'id', dir));
        });
      }
      await t.test(`sortBy=${key}&sortOrder=asc (aliases)`, async () => {
        const body = assertEnvelope(await get(`${V2}/conversation?sortBy=${key}&sortOrder=asc&resultsPerPage=100`));
        assert.deepEqual(ids(body.results), ids(totalOrder(expected, key, 'id', 'ASC')));
      });
    }
  });

  it('rejects order_by values not allowed for the operation and directions other than ASC/DESC', async () => {
    const acct = await createTestAccount();
    const get = api(server.url, acct.key);
    const cases: Array<{ path: string; q: string; param: string }> = [
      { path: '/response', q: 'order_by=question', param: 'order_by' },
      { path: '/response', q: 'order_by=updated_at', param: 'order_by' },
      { path: '/response', q: 'order_by=response_count', param: 'order_by' },
      { path: '/response', q: 'order_by=created_at%20DESC', param: 'order_by' },
      { path: '/response', q: 'sortBy=answer', param: 'sortBy' },
      { path: '/conversation', q: 'order_by=likes', param: 'order_by' },
      { path: '/conversation', q: 'order_by=title', param: 'order_by' },
      { path: '/conversation', q: 'order_by=response_id', param: 'order_by' },
      { path: '/conversation', q: 'sortBy=status', param: 'sortBy' },
      { path: '/response', q: 'sort=UP', param: 'sort' },
      { path: '/response', q: 'sort=ascending', param: 'sort' },
      { path: '/conversation', q: 'sortOrder=1', param: 'sortOrder' },
      { path: '/conversation', q: 'sort=DESC;', param: 'sort' },
    ];
    for (const c of cases) assertParamError(await get(`${V2}${c.path}?${c.q}`), c.param);
  });
});

describe('walking every page', () => {
  it('sees each of 37 records exactly once, in the total order, for every page size and direction', async (t) => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    // Only three created_at values and three likes values among 37 records: most neighbours tie.
    const rs = Array.from({ length: 37 }, (_, i) => responseLine(conv, { created_at: ts((i % 3) * 60), likes: (i * 2) % 3 }));
    await importLines(acct.accountId, [conv, ...rs]);
    const get = api(server.url, acct.key);
    const expected = rs.map(expectedResponse);
    for (const key of ['created_at', 'likes']) {
      for (const dir of ['ASC', 'DESC'] as const) {
        for (const size of [1, 4, 15, 100]) {
          await t.test(`order_by=${key} sort=${dir} resultsPerPage=${size}`, async () => {
            const walked = await walkPages(get, `${V2}/response?order_by=${key}&sort=${dir}&resultsPerPage=${size}`);
            const seen = ids(walked.records);
            assert.equal(new Set(seen).size, 37, 'no record twice');
            assert.deepEqual(seen, ids(totalOrder(expected, key, 'id', dir)));
            assert.equal(walked.pages, Math.ceil(37 / size));
            assert.ok(walked.counts.every((n) => n === 37));
          });
        }
      }
    }
    await t.test('with aliases on the first request', async () => {
      const walked = await walkPages(get, `${V2}/response?sortBy=likes&sortOrder=asc&pageSize=4`);
      assert.deepEqual(ids(walked.records), ids(totalOrder(expected, 'likes', 'id', 'ASC')));
    });
  });

  it('walks conversations with tied sort keys exactly once', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const convs = Array.from({ length: 11 }, (_, i) => conversationLine({ channel_id: ch!, created_at: ts((i % 2) * 60) }));
    const rs = convs.flatMap((c, i) => Array.from({ length: i % 3 }, () => responseLine(c)));
    await importLines(acct.accountId, [...convs, ...rs]);
    const get = api(server.url, acct.key);
    const expected = convs.map((c) => expectedConversation(c, rs, acct.accountId));
    for (const key of ['response_count', 'created_at', 'updated_at']) {
      for (const dir of ['ASC', 'DESC'] as const) {
        const walked = await walkPages(get, `${V2}/conversation?order_by=${key}&sort=${dir}&resultsPerPage=4`);
        assert.deepEqual(walked.records, totalOrder(expected, key, 'id', dir), `${key} ${dir}`);
      }
    }
  });
});

describe('format=gridjs', () => {
  it('keeps the envelope and the records, with every cell a string or a number, and carries format in links', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch!, title: 'Grid "title" {x}' });
    const rs = Array.from({ length: 5 }, (_, i) => responseLine(conv, { created_at: ts(i), likes: i, answer: `[${i}] {"a":1}` }));
    await importLines(acct.accountId, [conv, ...rs]);
    const get = api(server.url, acct.key);
    for (const path of ['/response', '/conversation']) {
      const plain = assertEnvelope(await get(`${V2}${path}?resultsPerPage=2&order_by=created_at&sort=ASC`));
      const grid = assertEnvelope(await get(`${V2}${path}?resultsPerPage=2&order_by=created_at&sort=ASC&format=gridjs`));
      assert.equal(grid.count, plain.count);
      assert.equal(grid.results.length, plain.results.length);
      grid.results.forEach((row: Rec, i: number) => {
        const original = plain.results[i]!;
        assert.deepEqual(Object.keys(row).sort(), Object.keys(original).sort());
        for (const [k, v] of Object.entries(row)) {
          assert.ok(typeof v === 'string' || typeof v === 'number', `${path} ${k} is ${typeof v}`);
          // A null (a conversation nobody is assigned to) is an empty cell; a boolean (declined) its text.
          const want = original[k];
          assert.equal(v, typeof want === 'boolean' ? String(want) : (want ?? ''), `${path} ${k}`);
        }
      });
      if (path === '/response') {
        assert.ok(grid.next);
        assert.deepEqual(linkParamSet(grid.next), ['format=gridjs', 'order_by=created_at', 'page=2', 'resultsPerPage=2', 'sort=ASC']);
        const page2 = assertEnvelope(await get(grid.next!));
        assert.deepEqual(linkParamSet(page2.previous), ['format=gridjs', 'order_by=created_at', 'page=1', 'resultsPerPage=2', 'sort=ASC']);
        assert.ok(linkParamSet(page2.next).includes('format=gridjs'));
      }
    }
  });

  it('rejects any other format on every operation', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    const r = responseLine(conv);
    await importLines(acct.accountId, [conv, r]);
    const get = api(server.url, acct.key);
    const paths = ['/response', '/conversation', `/response/${r.response_id}`, `/conversation/${conv.conversation_id}`];
    for (const path of paths) {
      for (const format of ['csv', 'json', 'html', 'gridjs2']) {
        assertParamError(await get(`${V2}${path}?format=${format}`), 'format');
      }
    }
  });
});
