/**
 * Dashboard sessions end server-side (issue 8 item 5), and the smaller sign-in holes of issue 9
 * item 8: callbackUrl never leaves the site, security headers, Secure cookies behind TLS, and a
 * capped sign-in body.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { changeAdminPassword } from '../../lib/accounts/admin-password';
import { requestPasswordReset } from '../../lib/team/password-reset';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { parseSuccess, runCli, testDbKind } from '../helpers/cli';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn, signOut } from '../helpers/signin';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({ TRUST_PROXY: 'loopback' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

/** What a cookie can read: the API-keys page (200 with its content) and the Customer API. */
async function reads(cookie: string) {
  const page = await fetch(`${server.url}/api-keys`, { headers: { cookie }, redirect: 'manual' });
  const html = await page.text();
  const api = await fetch(`${server.url}/customer-api/v2/response`, { headers: { cookie } });
  await api.text();
  return { page: page.status === 200 && html.includes('Create API key'), pageStatus: page.status, location: page.headers.get('location'), api: api.status };
}

async function signedIn(acct: TestAccount, password = acct.password) {
  const r = await signIn(server.url, acct.email, password);
  assert.equal(r.ok, true, `sign-in failed: ${r.error}`);
  return r.cookie!;
}

describe('sessions end server-side', () => {
  it('after signing out, replaying the old cookie reads neither the dashboard nor the API', async () => {
    const acct = await createTestAccount();
    const cookie = await signedIn(acct);
    assert.deepEqual(await reads(cookie).then((r) => [r.page, r.api]), [true, 200]);
    const other = await signedIn(acct); // a second session of the same admin (another browser)
    assert.equal(await signOut(server.url, cookie), 200);
    const replay = await reads(cookie);
    assert.equal(replay.page, false, `the page still renders for a signed-out cookie (${replay.pageStatus})`);
    assert.match(replay.location ?? '', /\/login/);
    assert.equal(replay.api, 401);
    // next-auth's own session endpoint checks the row too: nothing about the admin, cookie cleared.
    const ended = await fetch(`${server.url}/api/auth/session`, { headers: { cookie } });
    assert.equal(ended.status, 200);
    assert.deepEqual(await ended.json(), {});
    assert.match(ended.headers.get('set-cookie') ?? '', /Max-Age=0|Expires=Thu, 01 Jan 1970/i);
    const live = await fetch(`${server.url}/api/auth/session`, { headers: { cookie: other } });
    assert.equal(((await live.json()) as { user?: { email?: string } }).user?.email, acct.email);
    assert.deepEqual(await reads(other).then((r) => [r.page, r.api]), [true, 200], 'the other browser stays signed in');
  });

  it('a password change ends every session of that admin, and only the new password works', async () => {
    const acct = await createTestAccount();
    const bystander = await createTestAccount();
    const a = await signedIn(acct);
    const b = await signedIn(acct);
    const keep = await signedIn(bystander);
    await requestPasswordReset({ email: acct.email }, '198.51.100.61');
    const liveResetLinks = async () =>
      (
        await rows<{ n: number }>(
          await getDb(),
          sql`SELECT count(*)::int AS n FROM email_tokens t JOIN admin_users u ON u.id = t.user_id WHERE u.email = ${acct.email} AND t.kind = 'reset' AND t.used_at IS NULL`,
        )
      )[0]!.n;
    assert.equal(await liveResetLinks(), 1);
    const out = await changeAdminPassword({ email: acct.email, password: 'a brand new password' });
    assert.equal(out.email, acct.email);
    assert.equal(out.sessions_revoked, 2);
    assert.equal(await liveResetLinks(), 0, 'a reset link sent before the change dies with the old password');
    for (const cookie of [a, b]) assert.deepEqual(await reads(cookie).then((r) => [r.page, r.api]), [false, 401]);
    assert.deepEqual(await reads(keep).then((r) => [r.page, r.api]), [true, 200]);
    assert.equal((await signIn(server.url, acct.email, acct.password)).ok, false);
    await signedIn(acct, 'a brand new password');
  });

  it('CLI: user password prints one JSON object and ends the sessions', {
    skip: testDbKind === 'pglite' ? "PGlite: the CLI cannot share the running server's database (covered through the service above)" : false,
  }, async () => {
    const acct = await createTestAccount();
    const cookie = await signedIn(acct);
    const out = parseSuccess(await runCli(['user', 'password', '--email', acct.email, '--password', 'changed by the cli']));
    assert.deepEqual(Object.keys(out).sort(), ['account_id', 'email', 'sessions_revoked', 'user_id']);
    assert.equal(out.sessions_revoked, 1);
    assert.equal((await reads(cookie)).api, 401);
    const missing = await runCli(['user', 'password', '--email', 'nobody@example.test', '--password', 'whatever long']);
    assert.notEqual(missing.code, 0);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /nobody@example\.test/);
  });
});

describe('sign-in holes (issue 9 item 8)', () => {
  const CALLBACKS: Array<[string, string]> = [
    ['/\\evil.example', '/'],
    ['/\\\t/evil.example', '/'],
    ['/\t/evil.example', '/'],
    ['//evil.example', '/'],
    ['https://evil.example/', '/'],
    ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
    ['/responses?page=2', '/responses?page=2'],
  ];
  for (const [callbackUrl, path] of CALLBACKS) {
    it(`signing in with callbackUrl ${JSON.stringify(callbackUrl)} stays on this site (${path})`, async () => {
      const acct = await createTestAccount();
      const r = await signIn(server.url, acct.email, acct.password, {}, callbackUrl);
      assert.equal(r.ok, true);
      const target = new URL(r.url!);
      assert.ok(['localhost', '127.0.0.1'].includes(target.hostname), target.href); // NEXTAUTH_URL is http://localhost:PORT
      assert.equal(target.port, new URL(server.url).port);
      assert.equal(`${target.pathname}${target.search}`, path);
      // And the login page hands the form only a local path.
      const html = await (await fetch(`${server.url}/login?callbackUrl=${encodeURIComponent(callbackUrl)}`)).text();
      const prop = /\\"callbackUrl\\":\\"(.*?)\\"/.exec(html)?.[1];
      assert.equal(prop, path, 'the callbackUrl the login form receives');
    });
  }

  it('the dashboard forbids framing and sniffing; widget files stay loadable cross-origin', async () => {
    for (const path of ['/login', '/api-keys', '/customer-api/v2/openapi.json']) {
      const res = await fetch(`${server.url}${path}`, { redirect: 'manual' });
      await res.text();
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', path);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
      assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
      assert.equal(res.headers.get('referrer-policy'), 'strict-origin-when-cross-origin', path);
    }
    for (const path of ['/chatbot/loader.js', '/chat/v0/widget.js']) {
      const res = await fetch(`${server.url}${path}`, { headers: { origin: 'https://shop.example' } });
      await res.text();
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
      assert.equal(res.headers.get('x-frame-options'), null, path);
      assert.equal(res.headers.get('content-security-policy'), null, path);
    }
  });

  it('session cookies are Secure when a trusted proxy says the client used https, not otherwise', async () => {
    const acct = await createTestAccount();
    const tls = await signIn(server.url, acct.email, acct.password, { 'x-forwarded-for': '198.51.100.20', 'x-forwarded-proto': 'https' });
    const plain = await signIn(server.url, acct.email, acct.password, { 'x-forwarded-for': '198.51.100.21' });
    const session = (r: typeof tls) => r.setCookies.find((c) => c.startsWith('next-auth.session-token='))!;
    assert.match(session(tls), /;\s*Secure/i);
    assert.match(session(tls), /HttpOnly/i);
    assert.doesNotMatch(session(plain), /;\s*Secure/i);
  });

  it('sign-in bodies over 16 KiB are 413, with and without Content-Length', async () => {
    const big = `email=a%40b.c&password=${'x'.repeat(16 * 1024)}`;
    const declared = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: big,
    });
    assert.equal(declared.status, 413);
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const chunked = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 413);
  });
});
