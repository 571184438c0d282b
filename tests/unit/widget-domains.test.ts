/** The dashboard's domain box and the CLI's --domain: what an admin pastes is reduced to a host or refused with the reason. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reduceDomainInput, splitDomainBox } from '../../lib/widget-clients/contract';

describe('reduceDomainInput', () => {
  const reduced: Array<[string, string]> = [
    ['example.com', 'example.com'],
    ['  Shop.Example.COM  ', 'shop.example.com'],
    ['https://shop.example/path', 'shop.example'],
    ['https://Shop.Example:8443/a/b?c=1#d', 'shop.example'],
    ['http://user:pw@shop.example/', 'shop.example'],
    ['shop.example/checkout', 'shop.example'],
    ['shop.example:8080', 'shop.example'],
    ['localhost:3000', 'localhost'],
    ['shop.example.', 'shop.example'],
    ['https://shop.example./', 'shop.example'],
    ['*.example.com', '*.example.com'],
    ['https://*.example.org/', '*.example.org'],
    ['*.example.com:443', '*.example.com'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['127.0.0.1', '127.0.0.1'],
  ];
  for (const [input, want] of reduced) {
    it(`${JSON.stringify(input)} → ${want}`, () => assert.deepEqual(reduceDomainInput(input), { domain: want }));
  }
  const refused: Array<[string, RegExp]> = [
    ['not a domain!!', /"not a domain!!" contains a space: give one domain per line/],
    ['', /is empty/],
    ['*.x', /a wildcard needs a domain of two labels or more/],
    ['*.', /a wildcard needs a domain of two labels or more/],
    ['a.*.com', /a wildcard may only start the name/],
    ['ftp://files.example', /only http\(s\) addresses/],
    ['[::1]:8080', /IP v6 addresses cannot be registered/],
    ['foo_bar.example', /is not a host name/],
    ['-shop.example', /is not a host name/],
    ['shop..example', /is not a host name/],
    [`${'a'.repeat(64)}.com`, /is not a host name/],
    ['domain!!', /"domain!!" is not a host name/],
  ];
  for (const [input, message] of refused) {
    it(`refuses ${JSON.stringify(input)}`, () => {
      const r = reduceDomainInput(input);
      assert.ok('error' in r, JSON.stringify(r));
      assert.match(r.error, message);
    });
  }
  it('quotes a long input shortened, never whole', () => {
    const r = reduceDomainInput(`${'x'.repeat(300)} y`);
    assert.ok('error' in r && r.error.length < 200, JSON.stringify(r));
  });
});

describe('splitDomainBox', () => {
  it('splits lines and commas, keeps a line with spaces whole (so it is refused, not split into words)', () => {
    assert.deepEqual(splitDomainBox('a.com\n\n b.com ,c.com\r\nnot a domain!!\n'), ['a.com', 'b.com', 'c.com', 'not a domain!!']);
  });
});
