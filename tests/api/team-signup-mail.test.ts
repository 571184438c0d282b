/**
 * Sign-up (SIGNUP=open) on a server without SMTP_URL: each mail is logged and kept in the outbox
 * (status `logged`), so a trial can open its own links; and concurrent senders claim disjoint mails.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { claimDueMails, insertMail, NO_ACCOUNT, releaseMails } from '../../db/queries/mails';
import { listMails } from '../../lib/mail/service';
import { invitationMail, signupMail } from '../../lib/mail/templates';
import { startMailWorker, stopMailWorker } from '../../lib/mail/worker';
import { confirmSignup, requestSignup, SIGNUP_ANSWER } from '../../lib/team/signup';
import { listAccountMembers } from '../../lib/team/service';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { signInWith } from '../helpers/signin';

/** The client address of this file's password forms (each address may submit 20 in 10 minutes). */
const IP = '203.0.113.11';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({ SIGNUP: 'open', SMTP_URL: '', MAILS_PER_ADDRESS_PER_HOUR: '2' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

async function loggedMailTo(to: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { mails } = await listMails({ to });
    if (mails[0]?.status === 'logged') return mails[0];
    if (Date.now() > deadline) throw new Error(`no logged mail to ${to}: ${JSON.stringify(mails)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sign-up without SMTP_URL', () => {
  it('/signup creates nothing until the logged link is confirmed once; then the owner is signed in', async () => {
    const page = await fetch(`${server.url}/signup`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Account name/);
    const email = `founder-${randomUUID()}@example.test`;
    assert.deepEqual(await requestSignup({ accountName: 'Fresh Co', email, password: 'founder password' }, IP), { message: SIGNUP_ANSWER });
    const mail = await loggedMailTo(email);
    assert.equal(mail.sent_at, null);
    const token = mail.text.match(/\/signup\/confirm\/([0-9A-Za-z]+)/)![1]!;
    const [before] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM admin_users WHERE email = ${email}`);
    assert.equal(before!.n, 0, 'nothing before the confirmation');
    const confirmed = await confirmSignup(token);
    await assert.rejects(confirmSignup(token), { code: 'not_found' });
    assert.deepEqual(
      (await listAccountMembers(confirmed.account_id)).members.map((m) => [m.email, m.role]),
      [[email, 'owner']],
    );
    const session = await signInWith(server.url, { ticket: confirmed.ticket });
    assert.equal(session.ok, true, String(session.error));
    const home = await fetch(`${server.url}/team`, { headers: { cookie: session.cookie! }, redirect: 'manual' });
    assert.equal(home.status, 200);
  });

  it('the same answer for a taken address (no mail), a bad form is a precise error, and mails to one address are bounded', async () => {
    const email = `twice-${randomUUID()}@example.test`;
    for (let i = 0; i < 5; i++)
      assert.deepEqual(await requestSignup({ accountName: 'Again', email, password: 'founder password' }, IP), { message: SIGNUP_ANSWER });
    assert.equal((await listMails({ to: email })).mails.length, 2);
    await assert.rejects(
      requestSignup({ accountName: '', email: 'x', password: 'short' }, IP),
      (e: { code: string; message: string }) =>
        e.code === 'invalid_request' && /accountName/.test(e.message) && /email/.test(e.message) && /password/.test(e.message),
    );
    await assert.rejects(confirmSignup('forged'), { code: 'not_found' });
  });
});

describe('the outbox with several senders', () => {
  it('concurrent claims never hand the same mail to two senders', {
    skip: process.env.TEST_DB !== 'postgres' ? 'PostgreSQL only: PGlite has one connection' : false,
  }, async () => {
    const db = await getDb();
    const to = `many-${randomUUID()}@example.test`;
    // This server's own sender is one more claimant; the four here run at once on separate connections.
    for (let i = 0; i < 40; i++) await insertMail(db, 0, { to, subject: `m${i}`, text: 't', html: 'h' });
    const claims = await Promise.all(Array.from({ length: 4 }, () => claimDueMails(db, 15, 60)));
    const ids = claims
      .flat()
      .filter((m) => m.to === to)
      .map((m) => m.id);
    assert.equal(new Set(ids).size, ids.length, 'no mail claimed twice');
  });

  it('mails a stopping sender claimed but did not try go back to the outbox at once, their attempt undone', async () => {
    const db = await getDb();
    const to = `released-${randomUUID()}@example.test`;
    let mine: number[] = [];
    // The server's own sender may claim them first; a few rounds make sure this test claims some.
    for (let round = 0; round < 5 && mine.length === 0; round++) {
      for (let i = 0; i < 3; i++) await insertMail(db, 0, { to, subject: `r${i}`, text: 't', html: 'h' });
      mine = (await claimDueMails(db, 50, 60)).filter((m) => m.to === to).map((m) => m.id);
    }
    assert.ok(mine.length > 0, 'claimed some');
    await releaseMails(db, mine);
    // Released, each is pending and claimable again (attempts 0), or already sent by the server's own sender (its 1st attempt).
    const after = await rows<{ status: string; lease_until: Date | null; attempts: number }>(
      db,
      sql`SELECT status, lease_until, attempts FROM mails WHERE id IN ${sql.raw(`(${[0, ...mine].join(',')})`)}`,
    );
    assert.equal(after.length, mine.length);
    for (const m of after)
      assert.ok((m.status === 'pending' && m.lease_until === null && m.attempts === 0) || (m.status === 'logged' && m.attempts === 1), JSON.stringify(m));
  });
});

describe('a fair outbox', () => {
  it("another account's invitation queued after 1,000 mails of a flooding account goes in the first batch; so does a sign-up mail", async () => {
    const db = await getDb();
    await stopMailWorker(); // this test claims the batch itself
    try {
      const flooding = await createTestAccount('Flooding Co');
      const other = await createTestAccount('Other Co');
      const run = randomUUID();
      await rows(
        db,
        sql`INSERT INTO mails (account_id, "to", subject, text, html)
          SELECT ${flooding.accountId}, 'member-' || i || '-' || ${run} || '@example.test', 'Waiting for a person', 't', 'h' FROM generate_series(1, 1000) i RETURNING id`,
      );
      const invitee = `invitee-${run}@example.test`;
      await insertMail(
        db,
        other.accountId,
        invitationMail(invitee, { accountName: 'Other Co', inviter: 'Olga', role: 'agent', url: 'http://x.test/invite/t' }),
      );
      const founder = `founder-${run}@example.test`;
      await insertMail(db, NO_ACCOUNT, signupMail(founder, { accountName: 'New Co', url: 'http://x.test/signup/confirm/t' }));
      const batch = await claimDueMails(db, 10, 60);
      assert.ok(
        batch.some((m) => m.to === invitee),
        'the invitation is in the first batch',
      );
      // Earlier tests may have left account-less mail due: the rotation gives it a turn (its oldest first).
      assert.ok(
        batch.some((m) => m.account_id === NO_ACCOUNT),
        'account-less mail is in the first batch',
      );
      assert.ok(batch.filter((m) => m.account_id === flooding.accountId).length <= batch.length - 2, 'the flooding account only gets its turns');
      await rows(db, sql`UPDATE mails SET status = 'logged' WHERE "to" LIKE ${`%-${run}@example.test`} RETURNING id`);
    } finally {
      startMailWorker();
    }
  });
});
