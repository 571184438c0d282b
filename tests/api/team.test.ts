/**
 * Team and identity (docs/contracts.md §13) through the real server, a real SMTP server process and the
 * database: roles on every page, invitations, removal, ownership, password reset, two-factor
 * sign-in, and mail that survives the SMTP server being down.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { createAdminUser } from '../../lib/accounts/service';
import { requestPasswordReset, resetPassword, RESET_ANSWER } from '../../lib/team/password-reset';
import { verifyTicket } from '../../lib/auth/email-tokens';
import { passwordHashesComputed } from '../../lib/auth/passwords';
import { PASSWORD_FORMS_PER_ADDRESS } from '../../lib/team/form-limits';
import { beginTwoFactorSetup, confirmTwoFactorSetup, totpCode } from '../../lib/auth/two-factor';
import type { Role } from '../../lib/auth/roles';
import {
  acceptInvitation,
  changeMemberRole,
  getTeam,
  inviteMember,
  removeMember,
  revokeInvitation,
  setRequireTwoFactor,
  transferOwnership,
  type Actor,
} from '../../lib/team/service';
import { changeMyPassword } from '../../lib/team/profile';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn, signInWith } from '../helpers/signin';
import { linkIn, startSmtpServer, type ReceivedMail, type SmtpServer } from '../helpers/smtp';

/** The client address of this file's password forms (each address may submit 20 in 10 minutes). */
const IP = '203.0.113.10';

const MAILS_PER_ADDRESS = 3;
let server: TestServer;
let smtp: SmtpServer;
const received: ReceivedMail[] = [];
before(
  async () => {
    smtp = await startSmtpServer(0, received);
    server = await startTestServer({
      TRUST_PROXY: 'loopback',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'svc <team@example.test>',
      MAIL_RETRY_BASE_MS: '300',
      MAILS_PER_ADDRESS_PER_HOUR: String(MAILS_PER_ADDRESS),
      INVITATIONS_PER_HOUR: '50',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
    await smtp?.stop();
  },
  { timeout: 30_000 },
);

const PASSWORD = 'member password 1';
type Member = { userId: number; email: string; actor: Actor; cookie: string };

async function member(acct: TestAccount, role: Role): Promise<Member> {
  const email = `${role}-${randomUUID()}@example.test`;
  const u = await createAdminUser(CLI, {
    accountId: acct.accountId,
    email,
    password: PASSWORD,
    role: role === 'owner' ? 'admin' : role,
    name: `${role} person`,
  });
  return {
    userId: u.user_id,
    email,
    actor: { accountId: acct.accountId, userId: u.user_id, role, email, name: `${role} person` },
    cookie: await cookieOf(email, PASSWORD),
  };
}

async function mailCount(): Promise<number> {
  const [row] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM mails`);
  return row!.n;
}

async function owner(acct: TestAccount): Promise<Member> {
  const [row] = await rows<{ id: number }>(await getDb(), sql`SELECT id FROM admin_users WHERE email = ${acct.email}`);
  return {
    userId: row!.id,
    email: acct.email,
    actor: { accountId: acct.accountId, userId: row!.id, role: 'owner', email: acct.email, name: '' },
    cookie: await cookieOf(acct.email, acct.password),
  };
}

async function cookieOf(email: string, password: string): Promise<string> {
  const r = await signIn(server.url, email, password);
  assert.equal(r.ok, true, `sign-in of ${email} failed: ${r.error}`);
  return r.cookie!;
}

async function page(path: string, cookie: string) {
  const res = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: 'manual' });
  return { status: res.status, html: await res.text(), location: res.headers.get('location') };
}

const PAGES: Array<[string, string | null, Role[]]> = [
  // path, a text only the full page has, the roles that may open it
  ['/', 'Overview', ['owner', 'admin', 'agent']],
  ['/conversations', 'Conversations', ['owner', 'admin', 'agent']],
  ['/responses', 'Responses', ['owner', 'admin', 'agent']],
  ['/knowledge', 'Knowledge base', ['owner', 'admin', 'agent']],
  ['/profile', 'Two-factor authentication', ['owner', 'admin', 'agent']],
  ['/bot', 'Try a question', ['owner', 'admin']],
  ['/widget', 'Widget clients', ['owner', 'admin']],
  ['/api-keys', 'Create API key', ['owner', 'admin']],
  ['/webhooks', 'Add an endpoint', ['owner', 'admin']],
  ['/email', 'Your inbound address', ['owner', 'admin']],
  ['/team', 'Invite member', ['owner', 'admin']],
];

describe('roles on every door', () => {
  it('each page is the full page for the roles allowed and the 404 page (no partial render) for the others; the nav shows only what opens', async () => {
    const acct = await createTestAccount();
    const members = { owner: await owner(acct), admin: await member(acct, 'admin'), agent: await member(acct, 'agent') };
    for (const [path, marker, allowed] of PAGES) {
      for (const role of ['owner', 'admin', 'agent'] as const) {
        const r = await page(path, members[role].cookie);
        if (allowed.includes(role)) {
          assert.equal(r.status, 200, `${role} ${path}`);
          assert.ok(r.html.includes(marker!), `${role} ${path}: the page's content`);
        } else {
          assert.equal(r.status, 404, `${role} ${path} is a 404`);
          assert.ok(r.html.includes('Not found'), `${role} ${path}: the 404 page`);
          assert.ok(!r.html.includes(marker!), `${role} ${path}: nothing of the page`);
        }
      }
    }
    const nav = (await page('/', members.agent.cookie)).html;
    for (const hidden of ['href="/api-keys"', 'href="/webhooks"', 'href="/bot"', 'href="/team"', 'href="/widget"', 'href="/email"'])
      assert.ok(!nav.includes(hidden), hidden);
    assert.ok((await page('/', members.admin.cookie)).html.includes('href="/team"'));
    // The Customer API with an agent's session reads the account's records.
    const api = await fetch(`${server.url}/customer-api/v2/response`, { headers: { cookie: members.agent.cookie } });
    assert.equal(api.status, 200);
  });

  it('every team action refuses the roles it is not for (403), whatever the door', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    const admin = await member(acct, 'admin');
    const agent = await member(acct, 'agent');
    const cases: Array<[string, (a: Actor) => Promise<unknown>, Role[]]> = [
      ['list the team', (a) => getTeam(a), ['agent']],
      ['invite', (a) => inviteMember(CLI, a, { email: `n-${randomUUID()}@example.test`, role: 'agent' }), ['agent']],
      ['change a role', (a) => changeMemberRole(CLI, a, { userId: agent.userId, role: 'agent' }), ['agent']],
      ['remove', (a) => removeMember(CLI, a, { userId: 2_000_000_000 }), ['agent']],
      ['revoke an invitation', (a) => revokeInvitation(CLI, a, { id: randomUUID() }), ['agent']],
      ['transfer ownership', (a) => transferOwnership(CLI, a, { userId: agent.userId }), ['agent', 'admin']],
      ['require two-factor', (a) => setRequireTwoFactor(CLI, a, false), ['agent', 'admin']],
    ];
    for (const [what, run, refused] of cases) {
      for (const m of [agent, admin]) {
        const err = await run(m.actor).then(
          () => null,
          (e: { code?: string }) => e.code ?? 'thrown',
        );
        if (refused.includes(m.actor.role)) assert.equal(err, 'forbidden', `${m.actor.role}: ${what}`);
        else assert.notEqual(err, 'forbidden', `${m.actor.role}: ${what}`);
      }
    }
    assert.equal((await getTeam(o.actor)).members.length, 3);
  });
});

describe('invitations', () => {
  it('invite → a real mail (text and HTML) → accept once with name and password → signed in as an agent, who gets 404 on /api-keys', async () => {
    const acct = await createTestAccount('Invite Co');
    const o = await owner(acct);
    const email = `invitee-${randomUUID()}@example.test`;
    await inviteMember(CLI, o.actor, { email, role: 'agent' });
    const mail = await smtp.waitFor((m) => m.envelopeTo.includes(email));
    assert.match(mail.subject, /Invite Co/);
    assert.match(mail.from, /team@example\.test/);
    assert.ok(mail.html?.includes('/invite/'), 'an HTML part with the link');
    const link = linkIn(mail, '/invite/');
    const token = link.split('/invite/')[1]!;
    const stored = await rows<{ j: string }>(await getDb(), sql`SELECT row_to_json(i)::text AS j FROM invitations i WHERE email = ${email}`);
    assert.equal(stored.length, 1);
    assert.ok(!stored[0]!.j.includes(token), 'the token is stored only as a hash');
    const invitePage = await page(`/invite/${token}`, '');
    assert.equal(invitePage.status, 200);
    assert.match(invitePage.html, /Join (<!-- -->)?Invite Co/);
    assert.ok((await page('/team', o.cookie)).html.includes(email), 'listed as pending');

    const accepted = await acceptInvitation(token, { name: 'Ivy Invitee', password: 'invitee password' }, IP);
    const session = await signInWith(server.url, { ticket: accepted.ticket });
    assert.equal(session.ok, true, String(session.error));
    assert.equal((await page('/api-keys', session.cookie!)).status, 404);
    assert.equal((await page('/conversations', session.cookie!)).status, 200);
    assert.ok((await signIn(server.url, email, 'invitee password')).ok, 'the chosen password signs in');

    await assert.rejects(acceptInvitation(token, { name: 'Again', password: 'another password' }, IP), { code: 'not_found' });
    assert.ok((await page(`/invite/${token}`, '')).html.includes('Invitation not valid'));
    const team = await getTeam(o.actor);
    assert.deepEqual(team.members.find((m) => m.email === email)?.name, 'Ivy Invitee');
    assert.equal(team.invitations.length, 0);
  });

  it('forged, expired and revoked links are refused; an address with a user cannot be invited; forged sign-in tickets are refused', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    for (const forged of ['x', 'a'.repeat(43), `${'A'.repeat(42)}!`, '../../etc/passwd']) {
      await assert.rejects(acceptInvitation(forged, { name: 'F', password: 'long enough pw' }, IP), { code: 'not_found' });
      const r = await page(`/invite/${encodeURIComponent(forged)}`, '');
      assert.ok(r.status === 200 || r.status === 404, `${forged}: ${r.status}`);
      assert.ok(!r.html.includes('name="password"'), forged);
    }
    const expiring = `late-${randomUUID()}@example.test`;
    await inviteMember(CLI, o.actor, { email: expiring, role: 'admin' });
    const token = linkIn(await smtp.waitFor((m) => m.envelopeTo.includes(expiring)), '/invite/').split('/invite/')[1]!;
    await (await getDb()).execute(sql`UPDATE invitations SET expires_at = now() - interval '1 second' WHERE email = ${expiring}`);
    await assert.rejects(acceptInvitation(token, { name: 'Late', password: 'long enough pw' }, IP), { code: 'not_found' });

    const revoked = `revoked-${randomUUID()}@example.test`;
    const inv = await inviteMember(CLI, o.actor, { email: revoked, role: 'agent' });
    const revokedToken = linkIn(await smtp.waitFor((m) => m.envelopeTo.includes(revoked)), '/invite/').split('/invite/')[1]!;
    await revokeInvitation(CLI, o.actor, { id: inv.id });
    await assert.rejects(acceptInvitation(revokedToken, { name: 'R', password: 'long enough pw' }, IP), { code: 'not_found' });

    const other = await createTestAccount();
    // An address with a user is answered and mailed like any other (no "already a user" to enumerate); its link then refuses.
    const before = await mailCount();
    for (const taken of [acct.email, other.email]) {
      const r = await inviteMember(CLI, o.actor, { email: taken.toUpperCase(), role: 'agent' });
      assert.deepEqual(Object.keys(r).sort(), ['email', 'id', 'role']);
      assert.equal(r.email, taken);
    }
    assert.equal((await mailCount()) - before, 2, 'the same work: one invitation mail each');
    const takenToken = linkIn(await smtp.waitFor((m) => m.envelopeTo.includes(other.email) && m.text.includes('/invite/')), '/invite/').split('/invite/')[1]!;
    await assert.rejects(acceptInvitation(takenToken, { name: 'T', password: 'long enough pw' }, IP), { code: 'conflict' });
    for (const bad of [
      { email: 'nope', role: 'agent' },
      { email: 'a@b.test', role: 'owner' },
      { email: 'a@b.test', role: 'root' },
    ]) {
      await assert.rejects(inviteMember(CLI, o.actor, bad), { code: 'invalid_request' });
    }
    const forgedTicket = await signInWith(server.url, { ticket: 'eyJ1IjoxLCJwIjoic2lnbl9pbiIsImUiOjk5OTk5OTk5OTl9.forged' });
    assert.equal(forgedTicket.ok, false);
    assert.equal(forgedTicket.error, 'ticket_expired');
  });

  it('names and titles in mails are bounded lines without links or markup (no relay for arbitrary text)', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    const to = `relay-${randomUUID()}@example.test`;
    const spam = `Win money at http://spam.example/win and www.spam.example <b>now</b>\nSecond line ${'x'.repeat(500)}`;
    await inviteMember(CLI, { ...o.actor, name: spam }, { email: to, role: 'agent' });
    const m = await smtp.waitFor((x) => x.envelopeTo.includes(to));
    assert.doesNotMatch(m.text, /spam\.example/);
    assert.doesNotMatch(m.html ?? '', /<b>|spam\.example/);
    const inviterLine = m.text.split('\n')[0]!;
    assert.ok(inviterLine.length < 250, inviterLine);
    assert.ok(inviterLine.startsWith('Win money at [link removed] and [link removed] <b>now</b> S… invited you to join '), inviterLine);
  });

  it('invitations are rate-limited per account', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    let refused = 0;
    for (let i = 0; i < 52; i++) {
      await inviteMember(CLI, o.actor, { email: `burst-${i}-${randomUUID()}@example.test`, role: 'agent' }).catch((e: { code: string }) => {
        assert.equal(e.code, 'rate_limited');
        refused++;
      });
    }
    assert.equal(refused, 2);
  });
});

describe('members', () => {
  it('removing a member ends their sessions at once; a role change applies at the next request; the owner stays until a transfer', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    const agent = await member(acct, 'agent');
    const second = await cookieOf(agent.email, PASSWORD);
    assert.equal((await page('/api-keys', agent.cookie)).status, 404);
    await changeMemberRole(CLI, o.actor, { userId: agent.userId, role: 'admin' });
    assert.equal((await page('/api-keys', agent.cookie)).status, 200, 'promoted at once');
    await removeMember(CLI, o.actor, { userId: agent.userId });
    for (const cookie of [agent.cookie, second]) {
      const r = await page('/', cookie);
      assert.equal(r.status, 307);
      assert.match(r.location ?? '', /\/login/);
      assert.equal((await fetch(`${server.url}/customer-api/v2/response`, { headers: { cookie } })).status, 401);
    }
    assert.equal((await signIn(server.url, agent.email, PASSWORD)).ok, false);

    // What a removed admin invited leaves with them.
    const inviter = await member(acct, 'admin');
    const invitee = `by-removed-${randomUUID()}@example.test`;
    await inviteMember(CLI, inviter.actor, { email: invitee, role: 'agent' });
    const link = linkIn(await smtp.waitFor((m) => m.envelopeTo.includes(invitee)), '/invite/').split('/invite/')[1]!;
    await removeMember(CLI, o.actor, { userId: inviter.userId });
    assert.equal((await getTeam(o.actor)).invitations.length, 0);
    await assert.rejects(acceptInvitation(link, { name: 'Late', password: 'long enough pw' }, IP), { code: 'not_found' });

    const admin = await member(acct, 'admin');
    await assert.rejects(removeMember(CLI, admin.actor, { userId: o.userId }), { code: 'conflict' });
    await assert.rejects(changeMemberRole(CLI, admin.actor, { userId: o.userId, role: 'agent' }), { code: 'conflict' });
    await assert.rejects(changeMemberRole(CLI, o.actor, { userId: admin.userId, role: 'owner' }), { code: 'invalid_request' });
    await transferOwnership(CLI, o.actor, { userId: admin.userId });
    const roles = Object.fromEntries((await getTeam(o.actor)).members.map((m) => [m.email, m.role]));
    assert.deepEqual(roles, { [o.email]: 'admin', [admin.email]: 'owner' });
    assert.equal((await page('/team', o.cookie)).html.includes('Require two-factor authentication'), false, 'the former owner has no owner controls');
    await assert.rejects(
      transferOwnership(CLI, o.actor, { userId: admin.userId }),
      { code: 'forbidden' },
      'the former owner (a stale actor) is refused by the database',
    );
  });
});

describe('password reset', () => {
  it('1,000 requests for one address: the same answer each time, at most MAILS_PER_ADDRESS_PER_HOUR mails; unknown addresses get the same answer and no mail', async () => {
    const acct = await createTestAccount();
    const answers = new Set<string>();
    for (let i = 0; i < 1000; i++) answers.add((await requestPasswordReset({ email: acct.email }, `10.1.${i % 250}.${Math.floor(i / 250)}`)).message);
    const unknown = `nobody-${randomUUID()}@example.test`;
    answers.add((await requestPasswordReset({ email: unknown }, '10.2.0.1')).message);
    assert.deepEqual([...answers], [RESET_ANSWER]);
    const [count] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM mails WHERE "to" = ${acct.email}`);
    assert.equal(count!.n, MAILS_PER_ADDRESS);
    const [none] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM mails WHERE "to" = ${unknown}`);
    assert.equal(none!.n, 0);
  });

  it('the link works once, within the hour, and ends every session of that user', async () => {
    const acct = await createTestAccount();
    const a = await cookieOf(acct.email, acct.password);
    const b = await cookieOf(acct.email, acct.password);
    await requestPasswordReset({ email: acct.email }, '10.3.0.1');
    const mail = await smtp.waitFor((m) => m.envelopeTo.includes(acct.email) && /password/i.test(m.subject));
    assert.ok(mail.html?.includes('/reset-password/'));
    const token = linkIn(mail, '/reset-password/').split('/reset-password/')[1]!;
    assert.ok((await page(`/reset-password/${token}`, '')).html.includes('New password'));
    const out = await resetPassword(token, { password: 'a new password after reset' }, IP);
    assert.equal(out.sessions_revoked, 2);
    for (const cookie of [a, b]) assert.equal((await page('/', cookie)).status, 307);
    await assert.rejects(resetPassword(token, { password: 'yet another password' }, IP), { code: 'not_found' });
    assert.ok((await page(`/reset-password/${token}`, '')).html.includes('not valid any more'));
    assert.ok((await signIn(server.url, acct.email, 'a new password after reset')).ok);

    await requestPasswordReset({ email: acct.email }, '10.3.0.2');
    const late = linkIn(
      await smtp.waitFor((m) => m.envelopeTo.includes(acct.email) && m.text.includes('/reset-password/') && !m.text.includes(token)),
      '/reset-password/',
    ).split('/reset-password/')[1]!;
    await (await getDb()).execute(sql`UPDATE email_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'reset'`);
    await assert.rejects(resetPassword(late, { password: 'too late password' }, IP), { code: 'not_found' });
    await assert.rejects(resetPassword('forged', { password: 'whatever password' }, IP), { code: 'not_found' });
  });
});

describe('reset links after a reset', () => {
  it('using one reset link, or changing the password, ends every other reset link of that user', async () => {
    const acct = await createTestAccount();
    const linkFor = async (ip: string, seen: string[]) => {
      await requestPasswordReset({ email: acct.email }, ip);
      const m = await smtp.waitFor((x) => x.envelopeTo.includes(acct.email) && x.text.includes('/reset-password/') && !seen.some((t) => x.text.includes(t)));
      return linkIn(m, '/reset-password/').split('/reset-password/')[1]!;
    };
    const first = await linkFor('10.4.0.1', []);
    const second = await linkFor('10.4.0.2', [first]);
    await resetPassword(first, { password: 'the password after reset' }, IP);
    await assert.rejects(resetPassword(second, { password: 'an older link password' }, IP), { code: 'not_found' });

    const third = await linkFor('10.4.0.3', [first, second]);
    const [u] = await rows<{ id: number }>(await getDb(), sql`SELECT id FROM admin_users WHERE email = ${acct.email}`);
    await changeMyPassword(
      { userId: u!.id, accountId: acct.accountId, sessionId: '' },
      { current: 'the password after reset', password: 'changed on profile' },
    );
    await assert.rejects(resetPassword(third, { password: 'a link from before' }, IP), { code: 'not_found' });
  });
});

describe('password forms under load', () => {
  const wellFormed = () => randomUUID().replaceAll('-', '').padEnd(43, 'x');

  it('a forged, used or revoked link is refused before any password is hashed', async () => {
    const ip = '203.0.113.20';
    const before = passwordHashesComputed();
    for (let i = 0; i < 5; i++) {
      await assert.rejects(resetPassword(wellFormed(), { password: 'a long enough password' }, ip), { code: 'not_found' });
      await assert.rejects(acceptInvitation(wellFormed(), { name: 'F', password: 'a long enough password' }, ip), { code: 'not_found' });
    }
    assert.equal(passwordHashesComputed() - before, 0);
  });

  it('one client address may submit PASSWORD_FORMS_PER_ADDRESS password forms in 10 minutes; then a clear 429, other addresses unaffected', async () => {
    const ip = '203.0.113.21';
    for (let i = 0; i < PASSWORD_FORMS_PER_ADDRESS; i++) {
      await assert.rejects(resetPassword(wellFormed(), { password: 'a long enough password' }, ip), { code: 'not_found' });
    }
    for (const refused of [
      resetPassword(wellFormed(), { password: 'a long enough password' }, ip),
      acceptInvitation(wellFormed(), { name: 'F', password: 'a long enough password' }, ip),
    ]) {
      await assert.rejects(refused, (e: { code: string; message: string }) => e.code === 'rate_limited' && /password forms from this address/.test(e.message));
    }
    await assert.rejects(resetPassword(wellFormed(), { password: 'a long enough password' }, '203.0.113.22'), { code: 'not_found' });
  });
});

describe('two-factor sign-in', () => {
  it('password then code; no session before the code; a code is accepted once; a recovery code once; wrong codes are throttled', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    const setup = await beginTwoFactorSetup({ userId: o.userId, email: o.email }, acct.password, '10.4.0.9');
    const [stored] = await rows<{ s: string }>(await getDb(), sql`SELECT totp_secret AS s FROM admin_users WHERE id = ${o.userId}`);
    assert.ok(!stored!.s.includes(setup.secret), 'the secret is encrypted at rest');
    assert.match(setup.qr, /^data:image\/png;base64,/);
    const { recovery_codes: codes } = await confirmTwoFactorSetup({ userId: o.userId }, await totpCode(setup.secret), '10.4.0.1');
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);

    const step1 = await signIn(server.url, o.email, acct.password);
    assert.equal(step1.ok, false);
    assert.equal(step1.cookie, null, 'no session before the code');
    const [code, ticket] = step1.error!.split(':');
    assert.equal(code, 'two_factor_required');
    assert.equal(verifyTicket(ticket, 'two_factor'), o.userId);
    assert.equal((await signInWith(server.url, { ticket: ticket!, code: '000000' })).error?.split(':')[0], 'code_invalid');

    // The code of the next time step (the confirm used this one's): accepted once.
    const next = await totpCode(setup.secret, Date.now() / 1000 + 30);
    const ok = await signInWith(server.url, { ticket: ticket!, code: next });
    assert.equal(ok.ok, true, String(ok.error));
    assert.equal((await page('/', ok.cookie!)).status, 200);
    const replay = await signInWith(server.url, { ticket: ticket!, code: next });
    assert.equal(replay.ok, false);
    assert.equal(replay.error?.split(':')[0], 'code_invalid');

    const recovery = await signInWith(server.url, { ticket: ticket!, code: codes[3]!.toUpperCase() });
    assert.equal(recovery.ok, true, String(recovery.error));
    assert.equal((await signInWith(server.url, { ticket: ticket!, code: codes[3]! })).error?.split(':')[0], 'code_invalid');

    // A ticket names one user and one purpose: it cannot skip the code.
    assert.equal((await signInWith(server.url, { ticket: ticket! })).ok, false);
    let throttled = false;
    for (let i = 0; i < 10 && !throttled; i++) throttled = (await signInWith(server.url, { ticket: ticket!, code: '111111' })).error === 'throttled';
    assert.ok(throttled, 'wrong codes are throttled');
  });

  it('the owner requires two-factor: a member without it is sent to /profile before any other page, and actions are refused', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    const agent = await member(acct, 'agent');
    await setRequireTwoFactor(CLI, o.actor, true);
    for (const path of ['/', '/conversations', '/knowledge']) {
      const r = await page(path, agent.cookie);
      assert.equal(r.status, 307, path);
      assert.match(r.location ?? '', /\/profile$/);
    }
    assert.equal((await page('/profile', agent.cookie)).status, 200);
    assert.equal((await fetch(`${server.url}/customer-api/v2/response`, { headers: { cookie: agent.cookie } })).status, 403);
    const setup = await beginTwoFactorSetup({ userId: agent.userId, email: agent.email }, PASSWORD, '10.5.0.9');
    await confirmTwoFactorSetup({ userId: agent.userId }, await totpCode(setup.secret), '10.5.0.1');
    assert.equal((await page('/', agent.cookie)).status, 200);
  });
});

describe('mail outbox', () => {
  it('SMTP down: mails stay pending and are retried with backoff; back up: every one is delivered, none lost', async () => {
    const port = smtp.port;
    await smtp.stop();
    const acct = await createTestAccount();
    const o = await owner(acct);
    const emails = Array.from({ length: 5 }, () => `outage-${randomUUID()}@example.test`);
    for (const email of emails) await inviteMember(CLI, o.actor, { email, role: 'agent' });
    const pending = async () =>
      rows<{ status: string; attempts: number; last_error: string | null }>(
        await getDb(),
        sql`SELECT status, attempts, last_error FROM mails WHERE "to" IN (${sql.join(
          emails.map((e) => sql`${e}`),
          sql`, `,
        )})`,
      );
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !(await pending()).every((m) => m.attempts >= 2)) await new Promise((r) => setTimeout(r, 200));
    const during = await pending();
    assert.equal(during.length, 5);
    for (const m of during) {
      assert.equal(m.status, 'pending');
      assert.ok(m.attempts >= 2, `retried (${m.attempts})`);
      assert.ok(m.last_error, 'the failure is recorded');
    }
    smtp = await startSmtpServer(port, received);
    for (const email of emails) await smtp.waitFor((m) => m.envelopeTo.includes(email), 30_000);
    const until = Date.now() + 10_000;
    while (Date.now() < until && !(await pending()).every((m) => m.status === 'sent')) await new Promise((r) => setTimeout(r, 100));
    const after = await pending();
    assert.deepEqual(
      after.map((m) => m.status),
      ['sent', 'sent', 'sent', 'sent', 'sent'],
    );
    for (const email of emails) assert.equal(received.filter((m) => m.envelopeTo.includes(email)).length, 1, `${email} once`);
  });
});

describe('two-factor set-up', () => {
  it('needs the member password (a borrowed session cannot bind another phone); wrong ones are throttled like codes', async () => {
    const acct = await createTestAccount();
    const o = await owner(acct);
    const me = { userId: o.userId, email: o.email };
    for (const wrong of ['not the password', undefined, 'x'.repeat(2000), '', 42]) {
      await assert.rejects(beginTwoFactorSetup(me, wrong, '10.7.0.1'), { code: 'invalid_request' });
    }
    const [pending] = await rows<{ s: string | null }>(await getDb(), sql`SELECT totp_secret AS s FROM admin_users WHERE id = ${o.userId}`);
    assert.equal(pending!.s, null, 'no secret is stored for a wrong password');
    await assert.rejects(beginTwoFactorSetup(me, acct.password, '10.7.0.1'), { code: 'rate_limited' });
  });
});

describe('two-factor off', () => {
  it('turning two-factor off needs a valid code; afterwards the password alone signs in', async () => {
    const { turnOffTwoFactor } = await import('../../lib/auth/two-factor');
    const acct = await createTestAccount();
    const o = await owner(acct);
    const setup = await beginTwoFactorSetup({ userId: o.userId, email: o.email }, acct.password, '10.4.0.9');
    const { recovery_codes: codes } = await confirmTwoFactorSetup({ userId: o.userId }, await totpCode(setup.secret), '10.6.0.1');
    await assert.rejects(beginTwoFactorSetup({ userId: o.userId, email: o.email }, acct.password, '10.4.0.9'), { code: 'conflict' });
    await assert.rejects(turnOffTwoFactor({ userId: o.userId }, '123456', '10.6.0.1'), { code: 'invalid_request' });
    assert.equal((await signIn(server.url, o.email, acct.password)).error?.split(':')[0], 'two_factor_required');
    await turnOffTwoFactor({ userId: o.userId }, codes[0], '10.6.0.1');
    assert.equal((await signIn(server.url, o.email, acct.password)).ok, true);
  });
});
