// One database: PostgreSQL — the throttle is the limiter's, not the database's
/**
 * Sign-in throttling (issue 9 item 5, OWASP): per (email, address) and per address refusals, a
 * per-email slow-down that is never a lock, and bounded memory of failed emails. Addresses come
 * through X-Forwarded-For from a trusted loopback proxy (TRUST_PROXY=loopback).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordSignInFailure, SignInThrottled, slowdownMs, verifyAdminCredentials } from '../../lib/auth/admin-signin';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import v8 from 'node:v8';
import vm from 'node:vm';

const PER_PAIR = 3;
const PER_ADDRESS = 8;
const FREE_PER_EMAIL = 4;
const MAX_DELAY = 800;
let server: TestServer;
before(
  async () => {
    server = await startTestServer({
      TRUST_PROXY: 'loopback',
      SIGNIN_FAILURES_PER_EMAIL_AND_IP: String(PER_PAIR),
      SIGNIN_FAILURES_PER_IP: String(PER_ADDRESS),
      SIGNIN_FAILURES_PER_EMAIL: String(FREE_PER_EMAIL),
      SIGNIN_SLOWDOWN_MAX_MS: String(MAX_DELAY),
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

let n = 1;
const address = () => `203.0.${Math.floor(n / 250)}.${(n++ % 250) + 1}`;
const from = (a: string) => ({ 'x-forwarded-for': a });

describe('sign-in throttling', () => {
  it("a stranger's failures from many addresses slow the admin down but never stop them", async () => {
    const acct = await createTestAccount();
    const strangers = Array.from({ length: 5 }, address);
    for (const s of strangers) {
      for (let i = 0; i < PER_PAIR; i++) {
        const r = await signIn(server.url, acct.email, `wrong-${i}`, from(s));
        assert.equal(r.ok, false);
        assert.equal(r.error, 'CredentialsSignin');
      }
      // That stranger's address is now refused for this email, even with the right password.
      const refused = await signIn(server.url, acct.email, acct.password, from(s));
      assert.equal(refused.ok, false);
      assert.match(refused.error ?? '', /Too many failed sign-ins for this email/);
      assert.ok(refused.ms < 1000, `refused after ${refused.ms} ms`);
    }
    // 15 failures for the email: every attempt for it now waits MAX_DELAY first, then is answered.
    const admin = await signIn(server.url, acct.email, acct.password, from(address()));
    assert.equal(admin.ok, true, `the admin could not sign in: ${admin.error}`);
    assert.ok(admin.ms >= MAX_DELAY - 50, `slowed down: ${admin.ms} ms`);
    assert.ok(admin.ms < MAX_DELAY + 3000, `but answered: ${admin.ms} ms`);
    console.log(`admin signed in after ${PER_PAIR * strangers.length} stranger failures in ${admin.ms} ms (slow-down ${MAX_DELAY} ms)`);
  });

  it('the slow-down starts after SIGNIN_FAILURES_PER_EMAIL failures and doubles up to the cap', () => {
    const env = { SIGNIN_FAILURES_PER_EMAIL: 5, SIGNIN_SLOWDOWN_MAX_MS: 10_000 } as Parameters<typeof slowdownMs>[1];
    assert.deepEqual(
      [0, 4, 5, 6, 7, 9, 10, 1000].map((f) => slowdownMs(f, env)),
      [0, 0, 250, 500, 1000, 4000, 8000, 10_000],
    );
  });

  it('failures from one address for one email refuse only that pair', async () => {
    const acct = await createTestAccount();
    const mine = address();
    for (let i = 0; i < PER_PAIR; i++) assert.equal((await signIn(server.url, acct.email, 'typo', from(mine))).ok, false);
    const pairRefused = await signIn(server.url, acct.email, acct.password, from(mine));
    assert.match(pairRefused.error ?? '', /Too many failed sign-ins/);
    const other = await createTestAccount();
    assert.equal((await signIn(server.url, other.email, other.password, from(mine))).ok, true, 'another admin behind the same address signs in');
    assert.equal((await signIn(server.url, acct.email, acct.password, from(address()))).ok, true, 'the admin from another address signs in');
  });

  it('an address that fails for many emails is refused for every email', async () => {
    const acct = await createTestAccount();
    const sprayer = address();
    for (let i = 0; i < PER_ADDRESS; i++) {
      assert.equal((await signIn(server.url, `nobody${i}-${Date.now()}@example.test`, 'guess', from(sprayer))).error, 'CredentialsSignin');
    }
    const refused = await signIn(server.url, acct.email, acct.password, from(sprayer));
    assert.match(refused.error ?? '', /Too many failed sign-ins from your network/);
    assert.equal((await signIn(server.url, acct.email, acct.password, from(address()))).ok, true);
  });

  it('the memory of failed emails is bounded: 100,000 distinct emails', async () => {
    // A real collection before each reading, so only what is retained counts (not garbage).
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    // Through the real check, from 10 addresses: each address records PER_ADDRESS failures, then
    // is refused before anything is hashed, looked up or remembered.
    let before = heap();
    let started = Date.now();
    let refused = 0;
    const addrs = Array.from({ length: 10 }, address);
    for (let i = 0; i < 100_000; i++) {
      try {
        await verifyAdminCredentials(`spray${i}@example.test`, 'guess', addrs[i % 10]!);
      } catch (e) {
        assert.ok(e instanceof SignInThrottled);
        refused++;
      }
    }
    const viaCheck = (heap() - before) / 2 ** 20;
    const checkMs = Date.now() - started;
    assert.equal(refused, 100_000 - 10 * PER_ADDRESS);
    // Recorded directly (as if from 20,000 addresses, each failing once): the cost of one remembered failure.
    before = heap();
    started = Date.now();
    for (let i = 0; i < 20_000; i += 1000) {
      await Promise.all(
        Array.from({ length: 1000 }, (_, j) =>
          recordSignInFailure(`spray-b-${i + j}@example.test`, `10.${((i + j) >> 16) & 255}.${((i + j) >> 8) & 255}.${(i + j) & 255}`),
        ),
      );
    }
    const direct = (heap() - before) / 2 ** 20;
    console.log(
      `100,000 distinct failed emails: from 10 addresses through the check heap +${viaCheck.toFixed(1)} MiB (${checkMs} ms); recorded from 20,000 addresses heap +${direct.toFixed(1)} MiB (${Date.now() - started} ms)`,
    );
    assert.ok(viaCheck < 16, `heap grew ${viaCheck.toFixed(1)} MiB through the check`);
    assert.ok(direct < 60, `heap grew ${direct.toFixed(1)} MiB recording from 20,000 addresses`);
  });
});
