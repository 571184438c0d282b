/**
 * Members' replies by mail (docs/contracts.md §17 "members") through real SMTP both ways: svc's mail
 * arrives at a real SMTP server process (SMTP_URL) with the thread's headers, the customer's answer
 * (nodemailer to svc's listener) threads back; notes never mail, a resend mails once; each reply's
 * mail state (Queued → Sent, a 5xx refusal or a delivery report → Failed) reaches the inbox socket;
 * a widget visitor's answer to the away-mode mail joins their conversation and reaches the widget.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import nodemailer from 'nodemailer';
import { getDb, rows } from '../../db/client';
import { CLI } from '../../lib/audit/contract';
import { inboundAddress } from '../../lib/email/address';
import { processInboundMail } from '../../lib/email/processor';
import { saveEmailSettings } from '../../lib/email/settings';
import { mailUnseenReplies } from '../../lib/mail/handoff-notifier';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { connectMember, type InboxMember } from '../helpers/inbox';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import { startSmtpServer, type SmtpServer } from '../helpers/smtp';
import { backendToken, connectVisitor, createTestWidgetClient } from '../helpers/widget';

const DOMAIN = 'replies.svc.test';
let server: TestServer;
let outbox: SmtpServer;
const open: Array<{ close(): void }> = [];

before(
  async () => {
    outbox = await startSmtpServer();
    server = await startTestServer({
      SMTP_URL: outbox.url,
      MAIL_FROM: 'svc <support@svc.example>',
      INBOUND_SMTP_PORT: '0',
      INBOUND_MAIL_DOMAIN: DOMAIN,
      HANDOFF_REPLY_EMAIL_AFTER_SECONDS: '1',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    for (const s of open) s.close();
    await server?.close();
    await outbox?.stop();
  },
  { timeout: 30_000 },
);

const listener = () => nodemailer.createTransport({ host: '127.0.0.1', port: server.inboundSmtpPort!, secure: false, ignoreTLS: true });

/** Processes stored mail until none of the account's is left unprocessed. */
async function processAll(accountId: number) {
  const db = await getDb();
  for (let i = 0; i < 100; i++) {
    await processInboundMail();
    const [left] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM inbound_mails WHERE account_id = ${accountId} AND status = 'stored'`);
    if (left!.n === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail('inbound mail not processed');
}

const conversationOfMail = async (accountId: number, messageId: string) =>
  (
    await rows<{ conversation_id: string | null }>(
      await getDb(),
      sql`SELECT conversation_id FROM inbound_mails WHERE account_id = ${accountId} AND message_id = ${messageId}`,
    )
  )[0]?.conversation_id ?? null;

const mailsOf = async (conversationId: string) =>
  rows<{ status: string; message_id: string; conversation_message_id: string | null; last_error: string | null }>(
    await getDb(),
    sql`SELECT status, message_id, conversation_message_id, last_error FROM mails WHERE conversation_id = ${conversationId} ORDER BY id`,
  );

type Desk = { acct: TestAccount; address: string; member: InboxMember };

/** An account whose mail waits for a person ("AI answers email" off), its owner's inbox socket open. */
async function desk(name: string): Promise<Desk> {
  const acct = await createTestAccount(name);
  await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: false, acknowledge: false });
  const { address } = await inboundAddress(acct.accountId);
  const session = await signIn(server.url, acct.email, acct.password);
  const member = await connectMember(server.url, session.cookie!);
  open.push(member);
  return { acct, address, member };
}

/** A customer's mail to the desk: its conversation (waiting for a person). */
async function customerMail(d: Desk, from: string, subject = 'Where is my order?') {
  const messageId = `<${randomUUID()}@customer.example>`;
  await listener().sendMail({ from: `Carla Customer <${from}>`, to: d.address, subject, text: 'My order 4711 has not arrived.', messageId });
  await processAll(d.acct.accountId);
  const conversationId = await conversationOfMail(d.acct.accountId, messageId);
  assert.ok(conversationId, 'the mail started a conversation');
  return { conversationId, messageId };
}

const mailPushes = (d: Desk, conversationId: string) => d.member.of('inbox:mail', conversationId).map((p) => p.payload.state);

describe("members' replies by mail", () => {
  it('a reply goes out in the thread (From, Reply-To, Re:, In-Reply-To, References), Queued then Sent on the inbox; a note never mails, a resend mails once; the answer threads back', async () => {
    const d = await desk('Reply Co');
    const customer = `carla-${randomUUID().slice(0, 8)}@example.org`;
    const { conversationId, messageId } = await customerMail(d, customer);

    const reply = { conversation_id: conversationId, client_message_id: `m-${randomUUID()}`, text: 'It left our warehouse today.\nTracking follows.' };
    const ack = await d.member.ok<{ message: { id: string; mail?: string } }>('conversation:reply', reply);
    assert.equal(ack.message.mail, 'queued', 'the ack says the mail is queued');
    const pushed = () => d.member.of('inbox:message', conversationId).find((p) => (p.payload.message as { id: string }).id === ack.message.id);
    await d.member.until(() => pushed() !== undefined, 'the reply on the inbox');
    assert.equal((pushed()!.payload.message as { mail?: string }).mail, 'queued');

    const got = await outbox.waitFor((m) => m.envelopeTo.includes(customer));
    assert.equal(got.subject, 'Re: Where is my order?');
    assert.match(got.from, /\(Reply Co\)" <support@svc\.example>$|\(Reply Co\) <support@svc\.example>$/, got.from);
    assert.match(got.replyTo ?? '', new RegExp(`^${d.address.split('@')[0]}\\+[a-z2-7]{10}@${DOMAIN.replace(/\./g, '\\.')}$`));
    assert.equal(got.inReplyTo, messageId);
    assert.deepEqual(got.references, [messageId]);
    assert.match(got.messageId ?? '', new RegExp(`@${DOMAIN.replace(/\./g, '\\.')}>$`));
    assert.match(got.text, /It left our warehouse today\.\nTracking follows\./);
    assert.doesNotMatch(got.header, /^Auto-Submitted:/im, "a person wrote it: the customer's autoresponder may answer");
    await d.member.until(() => mailPushes(d, conversationId).includes('sent'), 'the Sent state');
    assert.deepEqual(d.member.of('inbox:mail', conversationId).at(-1)!.payload, {
      conversation_id: conversationId,
      message_id: ack.message.id,
      state: 'sent',
      error: null,
    });

    // The same reply sent again (a lost ack), and a note: still one mail.
    const again = await d.member.ok<{ message: { id: string } }>('conversation:reply', reply);
    assert.equal(again.message.id, ack.message.id);
    await d.member.ok('conversation:note', { conversation_id: conversationId, client_message_id: `n-${randomUUID()}`, text: 'Internal: check the courier' });
    const mails = await mailsOf(conversationId);
    assert.deepEqual(
      mails.map((m) => [m.status, m.conversation_message_id]),
      [['sent', ack.message.id]],
    );
    // The away-mode notifier never mails a reply that went out by mail itself.
    assert.equal(await mailUnseenReplies(0), 0);
    const page = await fetch(`${server.url}/inbox/${conversationId}`, {
      headers: { cookie: (await signIn(server.url, d.acct.email, d.acct.password)).cookie! },
    });
    assert.equal(page.status, 200);

    // The customer answers svc's mail: it joins the same conversation.
    const answerId = `<${randomUUID()}@customer.example>`;
    await listener().sendMail({
      from: customer,
      to: got.replyTo!,
      subject: got.subject,
      text: 'Thanks, found it!',
      messageId: answerId,
      inReplyTo: got.messageId!,
      references: [messageId, got.messageId!],
    });
    await processAll(d.acct.accountId);
    assert.equal(await conversationOfMail(d.acct.accountId, answerId), conversationId);
    assert.equal(outbox.received.filter((m) => m.envelopeTo.includes(customer)).length, 1, 'one mail to the customer');
  });

  it('a mail the receiving server refuses (550) is Failed, with the reason', async () => {
    const d = await desk('Refused Co');
    const { conversationId } = await customerMail(d, `refused-${randomUUID().slice(0, 8)}@example.org`);
    const ack = await d.member.ok<{ message: { id: string } }>('conversation:reply', {
      conversation_id: conversationId,
      client_message_id: `m-${randomUUID()}`,
      text: 'Hello?',
    });
    await d.member.until(() => mailPushes(d, conversationId).includes('failed'), 'the Failed state');
    const failed = d.member.of('inbox:mail', conversationId).at(-1)!.payload;
    assert.equal(failed.message_id, ack.message.id);
    assert.match(String(failed.error), /550/);
    const [m] = await mailsOf(conversationId);
    assert.equal(m!.status, 'failed', 'never retried');
  });

  it("a delivery report marks the reply's mail Failed; one naming another account's mail changes nothing", async () => {
    const d = await desk('Bounce Co');
    const other = await desk('Other Co');
    const customer = `gone-${randomUUID().slice(0, 8)}@example.org`;
    const { conversationId } = await customerMail(d, customer);
    await d.member.ok('conversation:reply', { conversation_id: conversationId, client_message_id: `m-${randomUUID()}`, text: 'Your parcel is on its way.' });
    const got = await outbox.waitFor((m) => m.envelopeTo.includes(customer));
    await d.member.until(() => mailPushes(d, conversationId).includes('sent'), 'the Sent state');
    const report = (to: string) =>
      fs
        .readFileSync('tests/fixtures/mail/delivery-report-headers.eml', 'utf8')
        .replace('support-inbound@mail.svc.test', to)
        .replace('<REPLACE-ME@mail.svc.test>', got.messageId!)
        .replace(/<20261129064000\.ABC12@mx\.example\.org>/, `<${randomUUID()}@mx.example.org>`);
    // To the other account: its mails only, so nothing changes.
    await listener().sendMail({ envelope: { from: '', to: [other.address] }, raw: report(other.address) });
    await processAll(other.acct.accountId);
    assert.equal((await mailsOf(conversationId))[0]!.status, 'sent');
    const [none] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM conversations WHERE account_id = ${other.acct.accountId}`);
    assert.equal(none!.n, 0, 'a delivery report is no conversation');

    await listener().sendMail({ envelope: { from: '', to: [d.address] }, raw: report(d.address) });
    await processAll(d.acct.accountId);
    await d.member.until(() => mailPushes(d, conversationId).includes('failed'), 'the Failed state');
    const [m] = await mailsOf(conversationId);
    assert.equal(m!.status, 'failed');
    assert.match(m!.last_error ?? '', /550 5\.1\.1 .*User unknown/);
    assert.equal(other.member.of('inbox:mail').length, 0, "the other account's members hear nothing");
  });
});

describe('away mode by mail', () => {
  it("a widget visitor's answer to svc's mail about a member's reply joins their conversation and reaches the open widget", async () => {
    const acct = await createTestAccount('Away Co');
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const issued = await backendToken(server.url, client);
    const visitor = await connectVisitor(server.url, issued.access_token, 'https://example.com');
    open.push(visitor);
    const asked = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', {
      client_message_id: 'q1',
      text: 'Can I talk to a person please?',
    });
    const id = asked.conversation_id;
    await visitor.ok('handoff:request', { conversation_id: id });
    const email = `wanda-${randomUUID().slice(0, 8)}@example.org`;
    await visitor.ok('visitor:email', { conversation_id: id, email });
    const session = await signIn(server.url, acct.email, acct.password);
    const member = await connectMember(server.url, session.cookie!);
    open.push(member);
    await member.ok('conversation:reply', { conversation_id: id, client_message_id: `m-${randomUUID()}`, text: 'We are back tomorrow at 9.' });

    // The widget never showed the reply: svc mails it, threaded and answerable.
    const got = await outbox.waitFor((m) => m.envelopeTo.includes(email));
    assert.equal(got.subject, 'Away Co replied to your question');
    assert.match(got.text, /reply to this email/);
    const { address } = await inboundAddress(acct.accountId);
    assert.match(got.replyTo ?? '', new RegExp(`^${address.split('@')[0]}\\+[a-z2-7]{10}@`));
    assert.match(got.messageId ?? '', new RegExp(`@${DOMAIN.replace(/\./g, '\\.')}>$`));

    // The visitor answers the mail (In-Reply-To only, to the account's plain address): their conversation.
    const answerId = `<${randomUUID()}@example.org>`;
    await listener().sendMail({
      from: email,
      to: address,
      subject: `Re: ${got.subject}`,
      text: 'Tomorrow is fine, thanks.',
      messageId: answerId,
      inReplyTo: got.messageId!,
    });
    await processAll(acct.accountId);
    assert.equal(await conversationOfMail(acct.accountId, answerId), id);
    await visitor.until(
      () => visitor.events.some((e) => (e.type === 'visitor.message' || e.type === 'question') && e.text === 'Tomorrow is fine, thanks.'),
      'the mail in the open widget',
    );
    await member.until(
      () => member.of('inbox:message', id).some((p) => (p.payload.message as { text: string }).text === 'Tomorrow is fine, thanks.'),
      'the mail in the inbox',
    );
  });
});
