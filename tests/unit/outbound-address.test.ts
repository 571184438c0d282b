/**
 * Outbound address safety (docs/contracts.md §11, §16): which addresses are refused, as tables; a host
 * name's refusal never says what it resolved to; OUTBOUND_ALLOW_PRIVATE_NETWORKS (and its alias
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS) lifts it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parseOutboundUrl, PRIVATE_REFUSED, refusedAddressReason, resolveOutboundTarget } from '../../lib/net/address';

// Read on first use (getEnv), after these lines.
delete process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS;
delete process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS;

const REFUSED: Array<[string, string]> = [
  ['127.0.0.1', '127.0.0.1 is a loopback address'],
  ['10.1.2.3', '10.1.2.3 is a private address'],
  ['169.254.169.254', '169.254.169.254 is a link-local address'],
  ['100.100.100.200', '100.100.100.200 is a carrier-grade NAT address'],
  ['0.0.0.0', '0.0.0.0 is an unspecified address'],
  ['::1', '::1 is a loopback address'],
  ['::', ':: is an unspecified address'],
  ['fd00:ec2::254', 'fd00:ec2::254 is a private (unique local) address'],
  ['fe80::1', 'fe80::1 is a link-local address'],
  // IPv4-compatible (::/96): refused whatever it embeds, public or not
  ['::7f00:1', '::7f00:1 is a reserved (IPv4-compatible) address'],
  ['::127.0.0.1', '127.0.0.1 is a loopback address'], // ipaddr.js reads the dotted form as mapped
  ['::a9fe:a9fe', '::a9fe:a9fe is a reserved (IPv4-compatible) address'],
  ['::808:808', '::808:808 is a reserved (IPv4-compatible) address'],
  ['::2', '::2 is a reserved (IPv4-compatible) address'],
  // IPv4-mapped: judged as the IPv4 address it reaches
  ['::ffff:127.0.0.1', '127.0.0.1 is a loopback address'],
  ['::ffff:a9fe:a9fe', '169.254.169.254 is a link-local address'],
  ['::ffff:10.0.0.1', '10.0.0.1 is a private address'],
  // the other IPv4-embedding forms: refused whatever they embed
  ['2002:7f00:1::', '2002:7f00:1:: is a reserved (6to4) address'],
  ['2002:808:808::1', '2002:808:808::1 is a reserved (6to4) address'],
  ['64:ff9b::7f00:1', '64:ff9b::7f00:1 is a reserved (rfc6052) address'],
  ['64:ff9b::808:808', '64:ff9b::808:808 is a reserved (rfc6052) address'],
  ['64:ff9b:1::a00:1', '64:ff9b:1::a00:1 is a reserved (rfc6052) address'],
  ['2001::a9fe:a9fe', '2001::a9fe:a9fe is a reserved (teredo) address'],
  ['::ffff:0:7f00:1', '::ffff:0:7f00:1 is a reserved (rfc6145) address'],
];
const ALLOWED = ['93.184.215.14', '8.8.8.8', '::ffff:8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'];

describe('refusedAddressReason', () => {
  for (const [address, why] of REFUSED) {
    it(`refuses ${address}`, () => assert.equal(refusedAddressReason(address), why));
  }
  for (const address of ALLOWED) {
    it(`allows ${address}`, () => assert.equal(refusedAddressReason(address), null));
  }
});

describe('resolveOutboundTarget', () => {
  it('a literal address is named in the refusal, with the setting that allows it', async () => {
    for (const url of ['http://[::7f00:1]/', 'http://[::127.0.0.1]/', 'http://[::ffff:7f00:1]/', 'http://2130706433/']) {
      await assert.rejects(resolveOutboundTarget(parseOutboundUrl(url)), (e: Error) => {
        assert.match(e.message, /^(127\.0\.0\.1|::7f00:1) is a (loopback|reserved \(IPv4-compatible\)) address; /, url);
        assert.ok(e.message.endsWith(PRIVATE_REFUSED), e.message);
        assert.match(e.message, /OUTBOUND_ALLOW_PRIVATE_NETWORKS=1/);
        return true;
      });
    }
  });

  it('a host name that resolves to loopback is refused without saying what it resolved to', async () => {
    for (const url of ['http://localhost:3000/hook', 'http://LocalHost/x']) {
      await assert.rejects(resolveOutboundTarget(parseOutboundUrl(url)), (e: Error) => {
        assert.match(e.message, /^host localhost resolves to a refused address; /, url);
        assert.ok(e.message.endsWith(PRIVATE_REFUSED));
        for (const leak of ['127.0.0.1', '::1', 'loopback address']) assert.ok(!e.message.includes(leak), `${leak} in ${e.message}`);
        return true;
      });
    }
  });

  for (const name of ['OUTBOUND_ALLOW_PRIVATE_NETWORKS', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS']) {
    it(`${name}=1 allows private addresses`, async () => {
      const script =
        "const m = await import('./lib/net/address.ts'); const a = m.default ?? m; " +
        "console.log(JSON.stringify(await a.resolveOutboundTarget(a.parseOutboundUrl('http://10.1.2.3/'))));";
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env: { ...process.env, [name]: '1' },
      });
      assert.deepEqual(JSON.parse(stdout), [{ address: '10.1.2.3', family: 4 }]);
    });
  }
});
