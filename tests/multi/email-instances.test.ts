/**
 * Inbound mail across real server processes (docs/contracts.md §17 "instances", "durability"): two
 * instances listen; mail is sent to both while one is killed (SIGKILL) right after acknowledging; every
 * acknowledged message becomes exactly one conversation with one question, the dead instance's
 * leased messages taken over by the other once their lease lapses. A member's reply acknowledged on
 * an instance killed while it sends the reply's mail is mailed once, in the thread, by another.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import nodemailer from 'nodemailer';
import { freePort, startInstance, removeInstance, type Instance } from '../helpers/instances';
import { startSmtpServer, type SmtpServer } from '../helpers/smtp';
import { sleep } from '../helpers/widget';

const onPostgres = process.env.TEST_DB === 'postgres' && Boolean(process.env.DATABASE_URL) && Boolean(process.env.REDIS_URL);
const DOMAIN = 'mail.multi.test';
/** An instance of this file: the run's database and Redis, the test mail domain, and its own settings. */
const instanceEnv = (extra: Record<string, string>) => ({
  DATABASE_URL: process.env.DATABASE_URL!,
  REDIS_URL: process.env.REDIS_URL!,
  REDIS_PREFIX: process.env.REDIS_PREFIX ?? `mail-${process.pid}:`,
  INBOUND_MAIL_DOMAIN: DOMAIN,
  ...extra,
});
/** A client of an instance's SMTP listener (plain, as a relay on the same host would talk). */
const listenerClient = (port: number) => nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });

describe('inbound mail across instances', { skip: !onPostgres && 'needs TEST_DB=postgres, DATABASE_URL and REDIS_URL' }, () => {
  const instances: Instance[] = [];
  const smtpPorts: number[] = [];

  before(
    async () => {
      for (const name of ['mail-a', 'mail-b']) {
        const port = await freePort();
        smtpPorts.push(port);
        instances.push(
          await startInstance(
            name,
            instanceEnv({ INBOUND_SMTP_PORT: String(port), INBOUND_MAIL_LEASE_SECONDS: '3', INBOUND_MAILS_PER_ACCOUNT_PER_MINUTE: '10000' }),
          ),
        );
      }
    },
    { timeout: 180_000 },
  );
  after(
    async () => {
      for (const i of instances) await removeInstance(i);
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase().catch(() => {});
    },
    { timeout: 60_000 },
  );

  it('every acknowledged mail is one conversation with one question, through a kill right after the 250', { timeout: 120_000 }, async () => {
    const { createTestAccount } = await import('../helpers/builders');
    const { inboundAddress } = await import('../../lib/email/address');
    const { getDb, rows } = await import('../../db/client');
    const { sql } = await import('drizzle-orm');
    process.env.INBOUND_MAIL_DOMAIN = DOMAIN;
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    // A's mails carry a long quoted tail the reply parser takes about a second over: A is still at them when it dies.
    const send = (port: number, i: number, slow = false) =>
      listenerClient(port).sendMail({
        from: `visitor-${i}-${randomUUID().slice(0, 6)}@example.org`,
        to: address,
        subject: `Question ${i}`,
        text: `Where is order ${i}?${slow ? `\n\n${'>'.repeat(20_000)}x` : ''}`,
      });
    // Eight at once to A, which dies the moment all are acknowledged (its processing still under way); twelve more to B.
    const acked: string[] = (await Promise.all(Array.from({ length: 8 }, (_, i) => send(smtpPorts[0]!, i, true)))).map((r) => r.messageId);
    await instances[0]!.stop('SIGKILL');
    for (let i = 8; i < 20; i++) acked.push((await send(smtpPorts[1]!, i)).messageId);
    const db = await getDb();
    type Row = { status: string; message_id: string; conversation_id: string | null; attempts: number };
    let all: Row[] = [];
    for (let t = 0; t < 300; t++) {
      all = await rows<Row>(db, sql`SELECT status, message_id, conversation_id, attempts FROM inbound_mails WHERE account_id = ${acct.accountId}`);
      if (all.length === 20 && all.every((m) => m.status === 'done')) break;
      await sleep(100);
    }
    assert.deepEqual(all.map((m) => m.status).sort(), Array(20).fill('done'), JSON.stringify(all));
    assert.deepEqual(all.map((m) => m.message_id).sort(), [...acked].sort(), 'every acknowledged message, once');
    const conversations = new Set(all.map((m) => m.conversation_id));
    assert.equal(conversations.size, 20);
    const [q] = await rows<{ n: number; c: number }>(
      db,
      sql`SELECT count(*)::int AS n, count(DISTINCT conversation_id)::int AS c FROM chat_answers WHERE account_id = ${acct.accountId}`,
    );
    assert.deepEqual([q!.n, q!.c], [20, 20], 'one question per conversation');
    const takenOver = all.filter((m) => m.attempts > 1).length;
    console.log(`email instances: ${takenOver} of 20 taken over after the kill`);
    assert.ok(takenOver > 0, 'the kill left messages that B took over');
  });
});

describe("a member's reply across instances", { skip: !onPostgres && 'needs TEST_DB=postgres, DATABASE_URL and REDIS_URL' }, () => {
  const instances: Instance[] = [];
  let sink: SmtpServer;
  // An SMTP server that accepts the connection and never greets: the sender waits in delivery.
  const held: net.Socket[] = [];
  const silent = net.createServer((s) => {
    held.push(s);
    s.on('error', () => {});
  });

  before(
    async () => {
      sink = await startSmtpServer();
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    },
    { timeout: 30_000 },
  );
  after(
    async () => {
      for (const i of instances) await removeInstance(i);
      for (const s of held) s.destroy();
      await new Promise((r) => silent.close(r));
      await sink?.stop();
      const { closeDatabase } = await import('../../db/client');
      await closeDatabase().catch(() => {});
    },
    { timeout: 60_000 },
  );

  it('a reply acknowledged on an instance killed while sending its mail is mailed once, in the thread, by another', { timeout: 90_000 }, async () => {
    const { createTestAccount } = await import('../helpers/builders');
    const { connectMember } = await import('../helpers/inbox');
    const { signIn } = await import('../helpers/signin');
    const { inboundAddress } = await import('../../lib/email/address');
    const { saveEmailSettings } = await import('../../lib/email/settings');
    const { CLI } = await import('../../lib/audit/contract');
    const { getDb, rows } = await import('../../db/client');
    const { sql } = await import('drizzle-orm');
    process.env.INBOUND_MAIL_DOMAIN = DOMAIN;
    const env = (smtpUrl: string) => instanceEnv({ SMTP_URL: smtpUrl, MAIL_LEASE_SECONDS: '3' });
    const inboundPort = await freePort();
    const a = await startInstance('reply-a', {
      ...env(`smtp://127.0.0.1:${(silent.address() as net.AddressInfo).port}`),
      INBOUND_SMTP_PORT: String(inboundPort),
    });
    instances.push(a);

    // The customer's mail, through A's listener: a conversation waiting for a person (no AI answer, no acknowledgement mailed).
    const acct = await createTestAccount('Reply Co');
    await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: false, acknowledge: false });
    const { address } = await inboundAddress(acct.accountId);
    const customer = `carla-${randomUUID().slice(0, 8)}@example.org`;
    const messageId = `<${randomUUID()}@customer.example>`;
    await listenerClient(inboundPort).sendMail({
      from: `Carla Customer <${customer}>`,
      to: address,
      subject: 'Where is my order?',
      text: 'My order 4711 has not arrived.',
      messageId,
    });
    const db = await getDb();
    let conversationId: string | null = null;
    for (let t = 0; t < 200 && !conversationId; t++) {
      const [m] = await rows<{ status: string; conversation_id: string | null }>(
        db,
        sql`SELECT status, conversation_id FROM inbound_mails WHERE account_id = ${acct.accountId} AND message_id = ${messageId}`,
      );
      if (m?.status === 'done') conversationId = m.conversation_id;
      else await sleep(100);
    }
    assert.ok(conversationId, "the customer's mail started a conversation");

    // The member's reply on A, acknowledged; A claims its mail and hangs in delivery, then dies.
    const member = await connectMember(a.url, (await signIn(a.url, acct.email, acct.password)).cookie!);
    const ack = await member.ok<{ message: { id: string; mail?: string } }>('conversation:reply', {
      conversation_id: conversationId,
      client_message_id: `m-${randomUUID()}`,
      text: 'It left our warehouse today.',
    });
    member.close();
    assert.equal(ack.message.mail, 'queued');
    type Mail = { status: string; attempts: number; leased: boolean };
    const mailOf = async () =>
      (await rows<Mail>(db, sql`SELECT status, attempts, lease_until > now() AS leased FROM mails WHERE conversation_message_id = ${ack.message.id}`))[0];
    let claimed: Mail | undefined;
    for (let t = 0; t < 100; t++) {
      claimed = await mailOf();
      if (claimed?.attempts === 1 && claimed.leased && held.length > 0) break;
      await sleep(50);
    }
    assert.deepEqual([claimed?.status, claimed?.attempts, claimed?.leased, held.length > 0], ['pending', 1, true, true], 'A holds the mail, in delivery');
    await a.stop('SIGKILL');

    // B starts only after A died: the first claim (attempts 1) is certainly A's, so B sends the mail only by taking it over.
    const started = Date.now();
    instances.push(await startInstance('reply-b', env(sink.url)));
    const got = await sink.waitFor((m) => m.envelopeTo.includes(customer), 30_000);
    console.log(`email instances: the reply's mail sent by B ${Date.now() - started} ms after the kill`);
    assert.equal(got.inReplyTo, messageId, 'in the thread');
    assert.deepEqual(got.references, [messageId]);
    assert.match(got.text, /It left our warehouse today\./);
    // Longer than a lease: a second send (the mail still due, or claimed twice) would arrive meanwhile.
    await sleep(4000);
    assert.equal(sink.received.filter((m) => m.envelopeTo.includes(customer)).length, 1, 'mailed exactly once');
    const done = await mailOf();
    assert.deepEqual([done?.status, done?.attempts], ['sent', 2], "sent, by B's takeover of A's claim");
  });
});
