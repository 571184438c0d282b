/** Admin password hashing (scrypt), without a database. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashPassword, verifyPassword } from '../../lib/auth/passwords';

describe('hashPassword and verifyPassword', () => {
  it('verifies the password and nothing else', async () => {
    const stored = await hashPassword('correct horse battery');
    assert.match(stored, /^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    assert.ok(!stored.includes('correct horse battery'));
    assert.equal(await verifyPassword('correct horse battery', stored), true);
    for (const wrong of ['correct horse batter', 'Correct horse battery', 'correct horse battery ', '']) {
      assert.equal(await verifyPassword(wrong, stored), false, JSON.stringify(wrong));
    }
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    assert.notEqual(a, b);
    assert.equal(await verifyPassword('same password', b), true);
  });

  it('treats composed and decomposed Unicode as the same password', async () => {
    const stored = await hashPassword('caf\u00e9 pässwörd');
    assert.equal(await verifyPassword('cafe\u0301 pa\u0308sswo\u0308rd', stored), true);
  });

  const MALFORMED = ['', 'plain text', 'bcrypt$2b$10$abc', 'scrypt$32768$8$1$salt', 'scrypt$$$$$'];
  for (const stored of MALFORMED) {
    it(`is false, not an exception, for a stored value ${JSON.stringify(stored)}`, async () => {
      assert.equal(await verifyPassword('anything', stored), false);
    });
  }
});
