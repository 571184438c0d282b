/** callbackUrl after sign-in never leaves the site (issue 9 item 8), as a table. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeCallbackPath } from '../../lib/auth/redirects';

const CASES: Array<[unknown, string, string?]> = [
  ['/\\evil.example', '/'],
  ['/\\\\evil.example', '/'],
  ['/\t/evil.example', '/'],
  ['/\\\t/evil.example', '/'],
  ['/\n/evil.example', '/'],
  ['\t//evil.example', '/'],
  [' //evil.example', '/'],
  ['//evil.example', '/'],
  ['///evil.example', '/'],
  ['https://evil.example/', '/'],
  ['https:evil.example', '/'],
  ['http:/\\evil.example', '/'],
  ['javascript:alert(1)', '/'],
  ['data:text/html,<script>alert(1)</script>', '/'],
  ['https://localhost:3000@evil.example/', '/', 'localhost:3000'],
  ['https://user:pw@localhost:3000/x', '/', 'localhost:3000'],
  ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
  ['/%5C%5Cevil.example', '/%5C%5Cevil.example'],
  ['%2F%2Fevil.example', '/%2F%2Fevil.example'],
  ['/responses?page=2#top', '/responses?page=2#top'],
  ['/conversations/abc', '/conversations/abc'],
  ['http://localhost:3000/widget', '/widget', 'localhost:3000'],
  ['http://localhost:3001/widget', '/', 'localhost:3000'],
  ['', '/'],
  [undefined, '/'],
  [['/a'], '/'],
  ['/' + 'a'.repeat(3000), '/'],
];

describe('safeCallbackPath', () => {
  for (const [input, expected, host] of CASES) {
    it(`${JSON.stringify(input)?.slice(0, 60)} → ${expected}`, () => {
      const out = safeCallbackPath(input, host);
      assert.equal(out, expected);
      // Whatever comes out, a browser resolves it on this site.
      assert.equal(new URL(out, 'https://svc.example').host, 'svc.example');
    });
  }
});
