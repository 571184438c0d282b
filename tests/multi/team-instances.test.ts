/**
 * The team across real server processes sharing one PostgreSQL (docs/contracts.md §13): two senders
 * share the mail outbox and deliver each mail once to a real SMTP server process; a removed
 * member's sessions end at once on every instance.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { closeDatabase, getDb, rows } from '../../db/client';
import { insertMail } from '../../db/queries/mails';
import { createAdminUser } from '../../lib/accounts/service';
import { removeMember } from '../../lib/team/service';
import { createTestAccount } from '../helpers/builders';
import { PrivatePostgres, startInstances, type Cluster } from '../helpers/instances';
import { signIn } from '../helpers/signin';
import { startSmtpServer, type SmtpServer } from '../helpers/smtp';

const enabled = process.env.TEST_DB === 'postgres';

// A private PostgreSQL: instances of other test files (without SMTP_URL) must not claim these mails.
describe('team across instances', { skip: !enabled && 'needs TEST_DB=postgres' }, () => {
  let pg: PrivatePostgres;
  let cluster: Cluster;
  let smtp: SmtpServer;

  before(
    async () => {
      pg = await PrivatePostgres.create();
      smtp = await startSmtpServer();
      cluster = await startInstances(2, { DATABASE_URL: pg.url, SMTP_URL: smtp.url });
      process.env.DATABASE_URL = pg.url; // this process writes into the same database
    },
    { timeout: 180_000 },
  );
  after(
    async () => {
      await cluster?.close();
      await smtp?.stop();
      await closeDatabase().catch(() => {});
      pg?.destroy();
    },
    { timeout: 60_000 },
  );

  it('two instances send each mail of the shared outbox exactly once', { timeout: 90_000 }, async () => {
    await createTestAccount();
    const run = randomUUID();
    const db = await getDb();
    for (let i = 0; i < 30; i++) await insertMail(db, 0, { to: `m${i}-${run}@example.test`, subject: `mail ${i}`, text: `text ${i}`, html: `<p>${i}</p>` });
    for (let i = 0; i < 30; i++) await smtp.waitFor((m) => m.envelopeTo.includes(`m${i}-${run}@example.test`), 60_000);
    await new Promise((r) => setTimeout(r, 2000)); // a second copy would arrive by now
    const mine = smtp.received.filter((m) => m.envelopeTo[0]!.endsWith(`-${run}@example.test`));
    assert.equal(mine.length, 30, 'each mail once');
  });

  it('removing a member ends their sessions on every instance at once', { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    const email = `agent-${randomUUID()}@example.test`;
    const agent = await createAdminUser(CLI, { accountId: acct.accountId, email, password: 'agent password', role: 'agent' });
    const [a, b] = cluster.urls as [string, string];
    const cookies = [(await signIn(a, email, 'agent password')).cookie!, (await signIn(b, email, 'agent password')).cookie!];
    for (const base of [a, b])
      for (const cookie of cookies) {
        assert.equal((await fetch(`${base}/conversations`, { headers: { cookie }, redirect: 'manual' })).status, 200);
      }
    const [row] = await rows<{ id: number }>(await getDb(), sql`SELECT id FROM admin_users WHERE email = ${acct.email}`);
    await removeMember(CLI, { accountId: acct.accountId, userId: row!.id, role: 'owner', email: acct.email, name: '' }, { userId: agent.user_id });
    for (const base of [a, b])
      for (const cookie of cookies) {
        const r = await fetch(`${base}/conversations`, { headers: { cookie }, redirect: 'manual' });
        assert.equal(r.status, 307, `${base}: signed out`);
        assert.equal((await fetch(`${base}/customer-api/v2/conversation`, { headers: { cookie } })).status, 401);
      }
  });
});
