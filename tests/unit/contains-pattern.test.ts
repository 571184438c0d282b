/** The LIKE pattern behind `query` (docs/contracts.md §4: % and _ are literal), without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containsPattern } from '../../db/queries/shared';

/** What PostgreSQL's ILIKE (with the default escape character \) would match, for checking the patterns. */
function likeMatches(pattern: string, text: string): boolean {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '%') re += '[\\s\\S]*';
    else if (c === '_') re += '[\\s\\S]';
    else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'iu').test(text);
}

describe('containsPattern', () => {
  const CASES: Array<[string, string]> = [
    ['abc', '%abc%'],
    ['', '%%'],
    ['50%', '%50\\%%'],
    ['a_b', '%a\\_b%'],
    ['back\\slash', '%back\\\\slash%'],
    ['%_\\', '%\\%\\_\\\\%'],
    ['café', '%café%'],
  ];
  for (const [text, pattern] of CASES) {
    it(`${JSON.stringify(text)} → ${JSON.stringify(pattern)}`, () => assert.equal(containsPattern(text), pattern));
  }

  const MATCHES: Array<[string, string, boolean]> = [
    ['50%', 'save 50% today', true],
    ['50%', 'save 500 today', false],
    ['a_b', 'xa_bx', true],
    ['a_b', 'xacbx', false],
    ['back\\slash', 'a back\\slash here', true],
    ['back\\slash', 'a backslash here', false],
    ['ABC', 'xxabcxx', true],
  ];
  for (const [query, text, expected] of MATCHES) {
    it(`${JSON.stringify(query)} ${expected ? 'finds' : 'does not find'} ${JSON.stringify(text)}`, () => {
      assert.equal(likeMatches(containsPattern(query), text), expected);
    });
  }
});
