/** Query-string scalars of the Customer API (docs/contracts.md §4), without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { channelIdParam, formatParam, intParam, sortParam, uuidParam } from '../../lib/api/params';

describe('intParam', () => {
  const perPage = intParam(1, 100, 'Records per page');
  const VALID: Array<[string, number]> = [
    ['1', 1],
    ['15', 15],
    ['100', 100],
    ['007', 7],
  ];
  for (const [text, value] of VALID) {
    it(`accepts ${text}`, () => assert.equal(perPage.parse(text), value));
  }
  const INVALID = ['0', '101', '-1', '+1', '1.0', '1.5', '1e2', '0x10', ' 1', '1 ', '', 'abc', '１', '9999999999999'];
  for (const text of INVALID) {
    it(`rejects ${JSON.stringify(text)} with the range in the message`, () => {
      const r = perPage.safeParse(text);
      assert.equal(r.success, false);
      assert.match(r.error!.issues[0]!.message, /integer between 1 and 100/);
    });
  }
  it('rejects non-strings', () => {
    assert.equal(perPage.safeParse(5).success, false);
  });
  it('channel ids go up to 2^31-1', () => {
    assert.equal(channelIdParam.parse('2147483647'), 2147483647);
    assert.equal(channelIdParam.safeParse('2147483648').success, false);
    assert.equal(channelIdParam.safeParse('0').success, false);
  });
});

describe('sortParam', () => {
  const VALID: Array<[string, 'ASC' | 'DESC']> = [
    ['ASC', 'ASC'],
    ['asc', 'ASC'],
    ['Asc', 'ASC'],
    ['DESC', 'DESC'],
    ['desc', 'DESC'],
    ['dEsC', 'DESC'],
  ];
  for (const [text, value] of VALID) {
    it(`accepts ${text} as ${value}`, () => assert.equal(sortParam.parse(text), value));
  }
  for (const text of ['', 'up', 'ascending', ' ASC', 'ASC ', 'DES', '1']) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      const r = sortParam.safeParse(text);
      assert.equal(r.success, false);
      assert.match(r.error!.issues[0]!.message, /ASC or DESC/);
    });
  }
});

describe('uuidParam and formatParam', () => {
  const uuid = uuidParam('id');
  it('lower-cases a UUID', () => {
    assert.equal(uuid.parse('0E9A1C1B-4B6F-4C1E-9F3A-2A6D8C7B5E4F'), '0e9a1c1b-4b6f-4c1e-9f3a-2a6d8c7b5e4f');
  });
  for (const text of ['', 'x', '0e9a1c1b4b6f4c1e9f3a2a6d8c7b5e4f', '{0e9a1c1b-4b6f-4c1e-9f3a-2a6d8c7b5e4f}', '0e9a1c1b-4b6f-4c1e-9f3a-2a6d8c7b5e4g']) {
    it(`uuid rejects ${JSON.stringify(text)}`, () => assert.equal(uuid.safeParse(text).success, false));
  }
  it('format is gridjs or nothing', () => {
    assert.equal(formatParam.parse('gridjs'), 'gridjs');
    for (const text of ['', 'json', 'GRIDJS', 'csv']) assert.equal(formatParam.safeParse(text).success, false, text);
  });
});
