/** The TOTP library as svc configures it, against RFC 6238's test vectors (appendix B, SHA-1). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { generate } from 'otplib';
import { decryptSecret, encryptSecret, totpCode, totpStep } from '../../lib/auth/two-factor';

// The RFC's SHA-1 secret is the ASCII "12345678901234567890"; otplib takes secrets in Base32.
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const VECTORS: Array<[number, string]> = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

it("otplib gives RFC 6238's 8-digit SHA-1 codes at each test time", async () => {
  for (const [time, code] of VECTORS) {
    assert.equal(await generate({ secret: RFC_SECRET, epoch: time, algorithm: 'sha1', digits: 8, period: 30 }), code, `T=${time}`);
  }
});

it("svc's 6-digit codes are the last 6 digits of the RFC's, and each belongs to its time step", async () => {
  for (const [time, code] of VECTORS) {
    assert.equal(await totpCode(RFC_SECRET, time), code.slice(2), `T=${time}`);
    assert.equal(await totpStep(RFC_SECRET, code.slice(2), time), Math.floor(time / 30));
  }
});

it('a code is valid one step either side and not beyond; non-digits are refused', async () => {
  const t = 1234567890;
  const code = await totpCode(RFC_SECRET, t);
  assert.equal(await totpStep(RFC_SECRET, code, t + 30), Math.floor(t / 30));
  assert.equal(await totpStep(RFC_SECRET, code, t - 30), Math.floor(t / 30));
  assert.equal(await totpStep(RFC_SECRET, code, t + 90), null);
  for (const bad of ['', '12345', '1234567', 'abcdef', `${code} `]) assert.equal(await totpStep(RFC_SECRET, bad, t), null);
});

it('the secret at rest is encrypted and authenticated', () => {
  process.env.NEXTAUTH_SECRET ??= 'a unit test secret that is long enough';
  const stored = encryptSecret(RFC_SECRET);
  assert.ok(!stored.includes(RFC_SECRET));
  assert.notEqual(encryptSecret(RFC_SECRET), stored, 'a fresh IV each time');
  assert.equal(decryptSecret(stored), RFC_SECRET);
  const parts = stored.split('.');
  parts[2] = Buffer.from('tampered').toString('base64url');
  assert.throws(() => decryptSecret(parts.join('.')));
});
