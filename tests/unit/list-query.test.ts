/** Parsing and paging of the Customer API list operations (docs/contracts.md §4), without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAppError } from '../../lib/core/errors';
import { envelope, gridjsCells, pageLink, parseListQuery, type ListQuery } from '../../lib/api/list-query';
import { ConversationListQuery } from '../../lib/conversations/contract';
import { ResponseListQuery } from '../../lib/responses/contract';

const parseResponses = (qs: string) => parseListQuery(new URLSearchParams(qs), ResponseListQuery);
const parseConversations = (qs: string) => parseListQuery(new URLSearchParams(qs), ConversationListQuery);
const BASE = '/customer-api/v2/response';

describe('parseListQuery', () => {
  it('defaults to page 1 of 15 with no filters', () => {
    assert.deepEqual(parseResponses(''), { query: { page: 1n, resultsPerPage: 15 }, channelIds: [] });
  });

  it('reads every recognised parameter and normalises sort and ids', () => {
    const uuid = '0E9A1C1B-4B6F-4C1E-9F3A-2A6D8C7B5E4F';
    const { query, channelIds } = parseResponses(
      `page=3&resultsPerPage=100&order_by=likes&sort=asc&channel_id=7&query=caf%C3%A9&format=gridjs&conversation_id=${uuid}`,
    );
    assert.deepEqual(query, {
      page: 3n,
      resultsPerPage: 100,
      order_by: 'likes',
      sort: 'ASC',
      channel_id: 7,
      query: 'café',
      format: 'gridjs',
      conversation_id: uuid.toLowerCase(),
    });
    assert.deepEqual(channelIds, [7]);
  });

  const ALIASES: Array<{ qs: string; expect: Partial<ListQuery<string>> }> = [
    { qs: 'pageSize=20', expect: { resultsPerPage: 20 } },
    { qs: 'sortBy=dislikes', expect: { order_by: 'dislikes' } },
    { qs: 'sortOrder=desc', expect: { sort: 'DESC' } },
    { qs: 'resultsPerPage=10&pageSize=20', expect: { resultsPerPage: 10 } },
    { qs: 'pageSize=20&resultsPerPage=10', expect: { resultsPerPage: 10 } },
    { qs: 'resultsPerPage=10&pageSize=abc', expect: { resultsPerPage: 10 } },
    { qs: 'order_by=likes&sortBy=comments', expect: { order_by: 'likes' } },
    { qs: 'order_by=likes&sortBy=not_a_field', expect: { order_by: 'likes' } },
    { qs: 'sort=ASC&sortOrder=DESC', expect: { sort: 'ASC' } },
    { qs: 'sort=asc&sortOrder=sideways', expect: { sort: 'ASC' } },
    { qs: 'page=2&page=5', expect: { page: 2n } },
    { qs: 'page=2&page=zero', expect: { page: 2n } },
    { qs: 'page=&resultsPerPage=&order_by=&sort=&query=&format=', expect: { page: 1n, resultsPerPage: 15 } },
    { qs: 'unknown=1&limit=5&offset=3', expect: { page: 1n, resultsPerPage: 15 } },
    { qs: 'sort=dEsC', expect: { sort: 'DESC' } },
  ];
  for (const c of ALIASES) {
    it(`aliases, repeats and empties: ${c.qs}`, () => {
      const { query } = parseResponses(c.qs);
      for (const [k, v] of Object.entries(c.expect)) assert.deepEqual(query[k as keyof typeof query], v, k);
      for (const k of ['pageSize', 'sortBy', 'sortOrder', 'unknown', 'limit']) assert.equal(k in query, false, `no ${k}`);
    });
  }

  it('channel_id and repeated channel_ids[] (raw or percent-encoded) are one union', () => {
    assert.deepEqual(parseResponses('channel_id=5&channel_ids[]=6&channel_ids%5B%5D=5&channel_ids[]=8').channelIds, [5, 6, 8]);
    assert.deepEqual(parseConversations('channel_ids%5B%5D=9').channelIds, [9]);
    assert.deepEqual(parseResponses('channel_ids[]=&channel_id=').channelIds, []);
  });

  it('order_by keys differ per operation', () => {
    assert.equal(parseConversations('order_by=updated_at').query.order_by, 'updated_at');
    assert.equal(parseConversations('order_by=response_count').query.order_by, 'response_count');
    for (const k of ['response_id', 'id', 'channel_id', 'conversation_id', 'created_at', 'likes', 'dislikes', 'comments']) {
      assert.equal(parseResponses(`order_by=${k}`).query.order_by, k);
    }
  });

  it('any integer page from 1 is valid, kept exact', () => {
    assert.equal(parseResponses('page=2147483648').query.page, 2147483648n);
    assert.equal(parseResponses('page=100000000000000000000').query.page, 10n ** 20n);
  });

  it('/conversation ignores conversation_id (not one of its filters)', () => {
    assert.equal('conversation_id' in parseConversations('conversation_id=nonsense').query, false);
  });

  const INVALID: Array<{ qs: string; param: string; parse?: (qs: string) => unknown }> = [
    { qs: 'page=0', param: 'page' },
    { qs: 'page=-1', param: 'page' },
    { qs: 'page=1.5', param: 'page' },
    { qs: 'page=abc', param: 'page' },
    { qs: 'page=1e3', param: 'page' },
    { qs: 'page=+2', param: 'page' },
    { qs: 'page=%202', param: 'page' },
    { qs: 'resultsPerPage=0', param: 'resultsPerPage' },
    { qs: 'resultsPerPage=101', param: 'resultsPerPage' },
    { qs: 'pageSize=101', param: 'pageSize' },
    { qs: 'pageSize=x', param: 'pageSize' },
    { qs: 'sort=up', param: 'sort' },
    { qs: 'sortOrder=sideways', param: 'sortOrder' },
    { qs: 'order_by=title', param: 'order_by' },
    { qs: 'sortBy=question', param: 'sortBy' },
    { qs: 'order_by=likes', param: 'order_by', parse: parseConversations },
    { qs: 'format=csv', param: 'format' },
    { qs: 'format=GRIDJS', param: 'format' },
    { qs: 'channel_id=abc', param: 'channel_id' },
    { qs: 'channel_id=0', param: 'channel_id' },
    { qs: 'channel_ids[]=1&channel_ids[]=x', param: 'channel_ids[]' },
    { qs: 'conversation_id=not-a-uuid', param: 'conversation_id' },
    { qs: `query=${'q'.repeat(201)}`, param: 'query' },
  ];
  for (const c of INVALID) {
    it(`rejects ${c.qs.slice(0, 40)} naming ${c.param}`, () => {
      assert.throws(
        () => (c.parse ?? parseResponses)(c.qs),
        (e: unknown) => {
          assert.ok(isAppError(e));
          assert.equal(e.code, 'invalid_parameters');
          assert.equal(e.status, 400);
          assert.deepEqual(
            e.errors?.map((x) => x.param),
            [c.param],
          );
          assert.ok(e.errors![0]!.message.length > 0);
          return true;
        },
      );
    });
  }

  it('lists every invalid parameter at once', () => {
    assert.throws(
      () => parseResponses('page=0&resultsPerPage=500&sort=x&channel_id=y'),
      (e: unknown) => {
        assert.ok(isAppError(e));
        assert.deepEqual(e.errors?.map((x) => x.param).sort(), ['channel_id', 'page', 'resultsPerPage', 'sort']);
        return true;
      },
    );
  });
});

describe('pageLink', () => {
  it('always carries page and resultsPerPage', () => {
    assert.equal(pageLink(BASE, { page: 1n, resultsPerPage: 15 }, 2n), `${BASE}?page=2&resultsPerPage=15`);
  });

  it('carries every recognised parameter in canonical form, encoded, and nothing else', () => {
    const { query } = parseResponses(
      'pageSize=5&sortBy=likes&sortOrder=asc&channel_id=3&channel_ids%5B%5D=4&channel_ids[]=6&query=50%25+off%26more&format=gridjs&foo=bar&page=2',
    );
    const link = pageLink(BASE, query, 3n);
    const url = new URL(link, 'http://x');
    assert.equal(url.pathname, BASE);
    assert.deepEqual(
      [...url.searchParams.keys()].filter((k, i, all) => all.indexOf(k) === i),
      ['page', 'resultsPerPage', 'order_by', 'sort', 'channel_id', 'channel_ids[]', 'query', 'format'],
    );
    assert.equal(url.searchParams.get('page'), '3');
    assert.equal(url.searchParams.get('resultsPerPage'), '5');
    assert.equal(url.searchParams.get('sort'), 'ASC');
    assert.deepEqual(url.searchParams.getAll('channel_ids[]'), ['4', '6']);
    assert.equal(url.searchParams.get('query'), '50% off&more');
    // Following the link parses back to the same query, on the other page.
    const back = parseResponses(url.search.slice(1));
    assert.deepEqual(back.query, { ...query, page: 3n });
    assert.deepEqual(back.channelIds, [3, 4, 6]);
  });
});

describe('envelope', () => {
  const q = (page: number, resultsPerPage = 15): ListQuery<string> => ({ page: BigInt(page), resultsPerPage });
  const CASES: Array<{ name: string; page: number; count: number; next: number | null; previous: number | null }> = [
    { name: 'no records', page: 1, count: 0, next: null, previous: null },
    { name: 'one page exactly', page: 1, count: 15, next: null, previous: null },
    { name: 'first of three', page: 1, count: 31, next: 2, previous: null },
    { name: 'middle', page: 2, count: 31, next: 3, previous: 1 },
    { name: 'last, partly filled', page: 3, count: 31, next: null, previous: 2 },
    { name: 'last, exactly filled', page: 2, count: 30, next: null, previous: 1 },
    { name: 'past the last page', page: 9, count: 31, next: null, previous: 8 },
    { name: 'past the end of an empty list', page: 2, count: 0, next: null, previous: 1 },
  ];
  it('a page far beyond any table links back to the page before it', () => {
    const e = envelope(BASE, { page: 10n ** 20n, resultsPerPage: 100 }, 5, []);
    assert.equal(e.next, null);
    assert.equal(e.previous, `${BASE}?page=${10n ** 20n - 1n}&resultsPerPage=100`);
  });
  for (const c of CASES) {
    it(c.name, () => {
      const results = [{ a: 1 }];
      const e = envelope(BASE, q(c.page), c.count, results);
      assert.deepEqual(Object.keys(e), ['count', 'next', 'previous', 'results']);
      assert.equal(e.count, c.count);
      assert.equal(e.results, results);
      assert.equal(e.next, c.next === null ? null : pageLink(BASE, q(c.page), BigInt(c.next)));
      assert.equal(e.previous, c.previous === null ? null : pageLink(BASE, q(c.page), BigInt(c.previous)));
    });
  }
});

describe('gridjsCells', () => {
  it('keeps strings and numbers, turns null into "" and objects and arrays into JSON text', () => {
    const cells = gridjsCells({
      s: 'text',
      empty: '',
      n: 3,
      zero: 0,
      neg: -1.5,
      nil: null,
      undef: undefined,
      yes: true,
      no: false,
      obj: { x: 1, y: 'z' },
      arr: [1, 'a'],
      emptyArr: [],
    });
    assert.deepEqual(cells, {
      s: 'text',
      empty: '',
      n: 3,
      zero: 0,
      neg: -1.5,
      nil: '',
      undef: '',
      yes: 'true',
      no: 'false',
      obj: '{"x":1,"y":"z"}',
      arr: '[1,"a"]',
      emptyArr: '[]',
    });
    for (const v of Object.values(cells)) assert.ok(typeof v === 'string' || typeof v === 'number');
  });

  it('keeps the keys and their order', () => {
    assert.deepEqual(Object.keys(gridjsCells({ b: 1, a: null, c: [] })), ['b', 'a', 'c']);
  });
});
