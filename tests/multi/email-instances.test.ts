/**
 * Inbound mail across real server processes (docs/contracts.md §17 "instances", "durability"): two
 * instances listen; mail is sent to both while one is killed (SIGKILL) right after acknowledging; every
 * acknowledged message becomes exactly one conversation with one question, the dead instance's
 * leased messages taken over by the other once their lease lapses.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import nodemailer from 'nodemailer';
import { freePort, startInstance, removeInstance, type Instance } from '../helpers/instances';
import { sleep } from '../helpers/widget';

const onPostgres = process.env.TEST_DB === 'postgres' && Boolean(process.env.DATABASE_URL) && Boolean(process.env.REDIS_URL);
const DOMAIN = 'mail.multi.test';

describe('inbound mail across instances', { skip: !onPostgres && 'needs TEST_DB=postgres, DATABASE_URL and REDIS_URL' }, () => {
  const instances: Instance[] = [];
  const smtpPorts: number[] = [];

  before(
    async () => {
      for (const name of ['mail-a', 'mail-b']) {
        const port = await freePort();
        smtpPorts.push(port);
        instances.push(
          await startInstance(name, {
            DATABASE_URL: process.env.DATABASE_URL!,
            REDIS_URL: process.env.REDIS_URL!,
            REDIS_PREFIX: process.env.REDIS_PREFIX ?? `mail-${process.pid}:`,
            INBOUND_SMTP_PORT: String(port),
            INBOUND_MAIL_DOMAIN: DOMAIN,
            INBOUND_MAIL_LEASE_SECONDS: '3',
            INBOUND_MAILS_PER_ACCOUNT_PER_MINUTE: '10000',
          }),
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
      nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true }).sendMail({
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
