/** TRUST_PROXY (docs/contracts.md §9): who the client is, as a table of peers, headers and settings. */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { addressLimitKey, clientAddressWith, parseTrustProxy } from '../../lib/net/client-address';

function req(peer: string, headers: Record<string, string> = {}): IncomingMessage {
  return { socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers } as unknown as IncomingMessage;
}

const CASES: Array<{ name: string; trust?: string; peer: string; headers?: Record<string, string>; ip: string; protocol: 'http' | 'https' }> = [
  {
    name: 'unset: forwarding headers are ignored',
    peer: '203.0.113.9',
    headers: { 'x-forwarded-for': '1.2.3.4', 'x-forwarded-proto': 'https' },
    ip: '203.0.113.9',
    protocol: 'http',
  },
  { name: 'unset: IPv4-mapped peer is shown as IPv4', peer: '::ffff:203.0.113.9', ip: '203.0.113.9', protocol: 'http' },
  {
    name: 'hop count 1: the address the proxy saw',
    trust: '1',
    peer: '10.0.0.2',
    headers: { 'x-forwarded-for': '1.2.3.4', 'x-forwarded-proto': 'https' },
    ip: '1.2.3.4',
    protocol: 'https',
  },
  {
    name: 'hop count 1: a forged left entry is not believed',
    trust: '1',
    peer: '10.0.0.2',
    headers: { 'x-forwarded-for': '6.6.6.6, 1.2.3.4' },
    ip: '1.2.3.4',
    protocol: 'http',
  },
  {
    name: 'hop count 2: two proxies',
    trust: '2',
    peer: '10.0.0.2',
    headers: { 'x-forwarded-for': '6.6.6.6, 1.2.3.4, 10.0.0.1', 'x-forwarded-proto': 'https, http' },
    ip: '1.2.3.4',
    protocol: 'https',
  },
  {
    name: 'CIDR: a trusted proxy',
    trust: '10.0.0.0/8',
    peer: '10.1.2.3',
    headers: { 'x-forwarded-for': '198.51.100.7', 'x-forwarded-proto': 'https' },
    ip: '198.51.100.7',
    protocol: 'https',
  },
  {
    name: 'CIDR: an untrusted peer sends the headers',
    trust: '10.0.0.0/8',
    peer: '198.51.100.7',
    headers: { 'x-forwarded-for': '1.1.1.1', 'x-forwarded-proto': 'https' },
    ip: '198.51.100.7',
    protocol: 'http',
  },
  {
    name: 'CIDR list with loopback: chain of trusted proxies',
    trust: 'loopback, 10.0.0.0/8',
    peer: '127.0.0.1',
    headers: { 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.0.0.5' },
    ip: '198.51.100.7',
    protocol: 'http',
  },
  {
    name: "appended X-Forwarded-Proto: the outermost trusted proxy's entry wins",
    trust: '1',
    peer: '10.0.0.2',
    headers: { 'x-forwarded-for': '1.2.3.4', 'x-forwarded-proto': 'https, http' },
    ip: '1.2.3.4',
    protocol: 'http',
  },
  {
    name: 'a nonsense protocol is ignored',
    trust: '1',
    peer: '10.0.0.2',
    headers: { 'x-forwarded-for': '1.2.3.4', 'x-forwarded-proto': 'gopher' },
    ip: '1.2.3.4',
    protocol: 'http',
  },
  { name: 'trusted, but no X-Forwarded-For: the peer', trust: '1', peer: '10.0.0.2', ip: '10.0.0.2', protocol: 'http' },
  {
    name: 'IPv6 client through a trusted proxy',
    trust: 'loopback',
    peer: '::1',
    headers: { 'x-forwarded-for': '2001:db8::1' },
    ip: '2001:db8::1',
    protocol: 'http',
  },
];

describe('client address under TRUST_PROXY', () => {
  for (const c of CASES) {
    it(c.name, () => {
      assert.deepEqual(clientAddressWith(req(c.peer, c.headers), parseTrustProxy(c.trust)), { ip: c.ip, protocol: c.protocol });
    });
  }

  for (const bad of ['0', '99', 'true', 'everyone', '10.0.0.0/8/8', '10.0.0.0/abc', '300.1.1.1']) {
    it(`refuses TRUST_PROXY=${bad} with a message naming it`, () => {
      assert.throws(() => parseTrustProxy(bad), /TRUST_PROXY/);
    });
  }
});

describe('addressLimitKey', () => {
  const KEYS: Array<[string, string]> = [
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['unknown', 'unknown'],
  ];
  for (const [ip, key] of KEYS) it(`${ip} → ${key}`, () => assert.equal(addressLimitKey(ip), key));
});
