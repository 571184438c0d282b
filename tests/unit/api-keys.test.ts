/** API keys: svc_<env>_<key id>_<secret> (docs/contracts.md §5), without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearerToken, generateApiKey, hashSecret, parseApiKey, secretMatches } from '../../lib/auth/api-keys';

const FORMAT = /^svc_(live|test)_([0-9A-Za-z]{12,})_([0-9A-Za-z]{32,})$/;

describe('generateApiKey', () => {
  for (const env of ['live', 'test'] as const) {
    it(`makes a ${env} key in the contract format whose secret matches the stored hash`, () => {
      const { key, keyId, secretHash } = generateApiKey(env);
      const m = FORMAT.exec(key);
      assert.ok(m, key);
      assert.equal(m[1], env);
      assert.equal(m[2], keyId);
      assert.ok(secretMatches(m[3]!, secretHash));
      assert.ok(!Buffer.from(secretHash).toString('latin1').includes(m[3]!), 'hash is not the secret');
      assert.deepEqual(parseApiKey(key), { env, keyId, secret: m[3] });
    });
  }

  it('never repeats a key id or a secret', () => {
    const ids = new Set<string>();
    const secrets = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const p = parseApiKey(generateApiKey('live').key)!;
      ids.add(p.keyId);
      secrets.add(p.secret);
    }
    assert.equal(ids.size, 500);
    assert.equal(secrets.size, 500);
  });

  it('uses the whole base62 alphabet', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) for (const ch of parseApiKey(generateApiKey('test').key)!.secret) seen.add(ch);
    assert.equal(seen.size, 62);
  });
});

describe('parseApiKey', () => {
  const id12 = 'A1b2C3d4E5f6';
  const s32 = 'abcdefghijklmnopqrstuvwxyz012345';
  it('accepts the minimum lengths', () => {
    assert.deepEqual(parseApiKey(`svc_live_${id12}_${s32}`), { env: 'live', keyId: id12, secret: s32 });
  });
  const INVALID: Array<[string, string]> = [
    ['', 'empty'],
    [`svc_prod_${id12}_${s32}`, 'an unknown environment'],
    [`SVC_live_${id12}_${s32}`, 'an upper-case prefix'],
    [`svc_LIVE_${id12}_${s32}`, 'an upper-case environment'],
    [`key_live_${id12}_${s32}`, 'another prefix'],
    [`svc_live_${id12.slice(1)}_${s32}`, 'an 11-character key id'],
    [`svc_live_${id12}_${s32.slice(1)}`, 'a 31-character secret'],
    [`svc_live_A1b2_C3d4E5f6_${s32}`, 'an underscore in the key id'],
    [`svc_live_${id12}_${s32}_extra`, 'an extra segment'],
    [`svc_live_${id12}_${s32.slice(0, -1)}-`, 'a dash in the secret'],
    [`svc_live_${id12}_${s32.slice(0, -1)}é`, 'a non-ASCII letter'],
    [` svc_live_${id12}_${s32}`, 'a leading space'],
    [`svc_live_${id12}_${s32}\n`, 'a trailing newline'],
    [`svc_live_${id12}${s32}`, 'no separator before the secret'],
    [`svc_test__${s32}`, 'an empty key id'],
  ];
  for (const [key, why] of INVALID) it(`rejects ${why}`, () => assert.equal(parseApiKey(key), null));
});

describe('secretMatches', () => {
  it('is true only for the exact secret', () => {
    const secret = 'S'.repeat(32);
    const stored = hashSecret(secret);
    assert.equal(secretMatches(secret, stored), true);
    assert.equal(secretMatches(`${'S'.repeat(31)}s`, stored), false);
    assert.equal(secretMatches(`${secret}S`, stored), false);
    assert.equal(secretMatches('', stored), false);
  });
  it('is false, not an exception, for a stored hash of the wrong length', () => {
    assert.equal(secretMatches('x'.repeat(32), new Uint8Array(0)), false);
    assert.equal(secretMatches('x'.repeat(32), new Uint8Array(16)), false);
  });
});

describe('bearerToken', () => {
  const CASES: Array<[string | null, string | null, string]> = [
    [null, null, 'no header'],
    ['Bearer abc', 'abc', 'the usual form'],
    ['bearer abc', 'abc', 'the scheme is case-insensitive'],
    ['BEARER abc', 'abc', 'upper-case scheme'],
    ['Bearer   abc  ', 'abc', 'extra spaces'],
    ['  Bearer abc', 'abc', 'leading spaces'],
    ['', '', 'an empty header'],
    ['Bearer', '', 'a scheme without a token'],
    ['Bearer ', '', 'a scheme and a space'],
    ['Basic dXNlcjpwYXNz', '', 'another scheme'],
    ['Bearer a b', '', 'two tokens'],
    ['Bearerabc', '', 'no space after the scheme'],
    ['abc', '', 'a bare token'],
  ];
  for (const [header, expected, why] of CASES) {
    it(`${why}: ${JSON.stringify(header)} → ${JSON.stringify(expected)}`, () => assert.equal(bearerToken(header), expected));
  }
});
