/**
 * svc's SMTP listener (docs/contracts.md §17) with a real SMTP client (nodemailer) against the real
 * server: recipients checked at RCPT (550, never a relay), the size (552), the per-sender rate
 * (451), STARTTLS, the `250` only once the raw message is stored, and processing from the store
 * exactly once (a duplicate Message-ID is one message; a lapsed lease is processed again).
 */
import { CLI, memberBy } from '../../lib/audit/contract';
import { listAudit } from '../../lib/audit/service';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import nodemailer from 'nodemailer';
import { getDb, rows } from '../../db/client';
import { demoMailCommand } from '../../lib/demo/seed';
import { inboundAddress, regenerateInboundAddress } from '../../lib/email/address';
import { processInboundMail } from '../../lib/email/processor';
import { getEmailSettings, saveEmailSettings } from '../../lib/email/settings';
import { isSvcTestMail } from '../../lib/email/svc-test';
import { NOT_LISTENING, sendTestEmail } from '../../lib/email/test-mail';
import { readMail } from '../../lib/documents/mail';
import { requestHandoff, resolveConversation } from '../../lib/conversations/handoff';
import { handleEmailAnswers, startEmailAnswers, stopEmailAnswers } from '../../lib/email/answers';
import { listInboxConversations } from '../../lib/conversations/inbox-views';
import { listAccountMembers } from '../../lib/team/service';
import { api, createTestAccount } from '../helpers/builders';
import { deflatedRepeat, docxBombLying, elfExecutable, mzExecutable, pngOfSize, tinyPdf, tinyPng, zipDeflated } from '../fixtures/widget-files';
import { startTestServer, type TestServer } from '../helpers/server';
import { startSmtpServer, type ReceivedMail, type SmtpServer } from '../helpers/smtp';
import { addKnowledge } from '../helpers/widget';
import { signIn } from '../helpers/signin';

const DOMAIN = 'mail.svc.test';
const MAX_BYTES = 64 * 1024;
/** Smaller than a mail may be, so an attachment can be over the upload limit. */
const UPLOAD_MAX = 16 * 1024;
/** Bytes of uploads an account may hold: two files near the upload limit fill it. */
const UPLOAD_QUOTA = 24 * 1024;
const PER_SENDER = 4;
const ANSWERS_PER_HOUR = 2;
let server: TestServer;
let port = 0;
let tlsDir = '';
/** The real SMTP server svc's own mails go to (SMTP_URL). */
let outbox: SmtpServer;

before(
  async () => {
    tlsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-smtp-tls-'));
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${DOMAIN}`, '-keyout', `${tlsDir}/key.pem`, '-out', `${tlsDir}/cert.pem`],
      {
        stdio: 'ignore',
      },
    );
    outbox = await startSmtpServer();
    server = await startTestServer({
      SMTP_URL: outbox.url,
      MAIL_FROM: 'svc <support@svc.example>',
      EMAIL_ANSWERS_PER_SENDER_PER_HOUR: String(ANSWERS_PER_HOUR),
      INBOUND_SMTP_PORT: '0',
      INBOUND_MAIL_DOMAIN: DOMAIN,
      INBOUND_MAIL_MAX_BYTES: String(MAX_BYTES),
      UPLOAD_MAX_BYTES: String(UPLOAD_MAX),
      UPLOAD_QUOTA_BYTES_PER_ACCOUNT: String(UPLOAD_QUOTA),
      INBOUND_MAILS_PER_SENDER_PER_MINUTE: String(PER_SENDER),
      INBOUND_SMTP_TLS_CERT: `${tlsDir}/cert.pem`,
      INBOUND_SMTP_TLS_KEY: `${tlsDir}/key.pem`,
    });
    port = server.inboundSmtpPort!;
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
    await outbox?.stop();
    if (tlsDir) fs.rmSync(tlsDir, { recursive: true, force: true });
  },
  { timeout: 30_000 },
);

const client = (o: { requireTLS?: boolean; ignoreTLS?: boolean } = {}) =>
  nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, tls: { rejectUnauthorized: false }, ...o });

/** A mail from a fresh sender (the per-sender rate is per address). */
function mail(to: string, o: { from?: string; subject?: string; text?: string; messageId?: string } = {}) {
  return {
    from: o.from ?? `Ada Visitor <ada-${randomUUID().slice(0, 8)}@example.org>`,
    to,
    subject: o.subject ?? 'Where is my order?',
    text: o.text ?? 'Hello, my order 4711 has not arrived yet.',
    ...(o.messageId ? { messageId: o.messageId } : {}),
  };
}

/** The SMTP reply code of a refused send (nodemailer's `responseCode`). */
async function refusal(p: Promise<unknown>): Promise<{ code: number; command: string; response: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as { responseCode?: number; command?: string; response?: string };
    return { code: err.responseCode ?? 0, command: err.command ?? '', response: err.response ?? '' };
  }
  assert.fail('the server accepted what it should refuse');
}

const stored = async (accountId: number) =>
  rows<{
    id: number;
    status: string;
    envelope_from: string;
    raw: Uint8Array;
    message_id: string | null;
    from_address: string | null;
    subject: string | null;
    conversation_id: string | null;
  }>(
    await getDb(),
    sql`SELECT id::float8 AS id, status, envelope_from, raw, message_id, from_address, subject, conversation_id FROM inbound_mails WHERE account_id = ${accountId} ORDER BY id`,
  );

/** The visitor's messages in a conversation once there are `n`: questions to the AI and messages kept for the team. */
async function visitorMessagesIn(accountId: number, id: string, n: number): Promise<number> {
  const db = await getDb();
  let found = 0;
  for (let i = 0; i < 200 && found < n; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    const [row] = await rows<{ n: number }>(
      db,
      sql`SELECT ((SELECT count(*) FROM chat_answers WHERE conversation_id = ${id} AND account_id = ${accountId})
        + (SELECT count(*) FROM conversation_messages WHERE conversation_id = ${id} AND account_id = ${accountId} AND author = 'visitor'))::int AS n`,
    );
    found = row!.n;
  }
  return found;
}

/** A conversation as the tables hold it once `answers` answers are stored: its channel's name, title, contact and questions. */
async function conversationOf(accountId: number, id: string, answers = 1) {
  const db = await getDb();
  const [c] = await rows<{ channel: string; title: string; visitor_email: string | null }>(
    db,
    sql`SELECT ch.name AS channel, c.title, c.visitor_email FROM conversations c JOIN channels ch ON ch.account_id = c.account_id AND ch.id = c.channel_id
    WHERE c.id = ${id} AND c.account_id = ${accountId}`,
  );
  assert.ok(c, `conversation ${id}`);
  // A response row is written when its answer finishes (the runner works in the background).
  const read = () =>
    rows<{ question: string }>(db, sql`SELECT question FROM responses WHERE conversation_id = ${id} AND account_id = ${accountId} ORDER BY created_at`);
  let questions = await read();
  for (let i = 0; i < 200 && questions.length < answers; i++) {
    await new Promise((r) => setTimeout(r, 50));
    questions = await read();
  }
  return { ...c, questions: questions.map((q) => q.question) };
}

async function processed(accountId: number, n: number) {
  for (let i = 0; i < 100; i++) {
    await processInboundMail();
    const all = await stored(accountId);
    if (all.length >= n && all.every((m) => m.status !== 'stored')) return all;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`the account's ${n} mails were not processed: ${JSON.stringify((await stored(accountId)).map((m) => m.status))}`);
}

describe('inbound addresses', () => {
  it('each account has one unguessable address at INBOUND_MAIL_DOMAIN; regenerating it retires the old one', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    assert.match(address, new RegExp(`^[a-z2-7]{16}@${DOMAIN.replace(/\./g, '\\.')}$`));
    assert.equal((await inboundAddress(acct.accountId)).address, address, 'stable');
    const other = await inboundAddress((await createTestAccount()).accountId);
    assert.notEqual(other.address, address);
    const fresh = await regenerateInboundAddress(CLI, acct.accountId);
    assert.notEqual(fresh.address, address);
    const old = await refusal(client().sendMail(mail(address)));
    assert.deepEqual([old.code, old.command], [550, 'RCPT TO']);
    await client().sendMail(mail(fresh.address));
  });
});

describe('the quick start', () => {
  it('the one line printed at start sends a customer mail (curl over SMTP) that becomes a conversation', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    await promisify(execFile)('sh', ['-c', demoMailCommand(address, port)]);
    const [done] = await processed(acct.accountId, 1);
    assert.deepEqual([done!.status, done!.from_address, done!.subject], ['done', 'you@example.com', 'Shipping to Norway']);
  });
});

describe('the SMTP listener', () => {
  it('refuses at RCPT an unknown mailbox, a tag svc never issued and any other domain (never a relay)', async () => {
    const { address } = await inboundAddress((await createTestAccount()).accountId);
    const local = address.split('@')[0]!;
    for (const to of [`nobodyhereatall@${DOMAIN}`, `${local}+made-up@${DOMAIN}`, `${local}@example.com`, `postmaster@gmail.com`]) {
      const r = await refusal(client().sendMail(mail(to)));
      assert.deepEqual([r.code, r.command], [550, 'RCPT TO'], `${to}: ${r.response}`);
    }
  });

  it('acknowledges a message only once its raw text is stored, then processes it once', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const sent = await client().sendMail(mail(address.toUpperCase(), { from: 'Ada <ada@example.org>', subject: 'Order 4711' }));
    assert.match(sent.response, /^250 /);
    // No wait: the 250 came after the insert.
    const [row] = await stored(acct.accountId);
    assert.ok(row, 'stored before the 250');
    assert.equal(row.envelope_from, 'ada@example.org');
    assert.match(Buffer.from(row.raw).toString('utf8'), /my order 4711 has not arrived/);
    const [done] = await processed(acct.accountId, 1);
    assert.deepEqual([done!.status, done!.from_address, done!.subject, done!.message_id], ['done', 'ada@example.org', 'Order 4711', sent.messageId]);
  });

  it("a mail starts a conversation on the account's Email channel: the subject its title, the sender its contact, the new text the visitor's question", async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const raw = fs.readFileSync('tests/fixtures/mail/gmail-reply.eml', 'utf8').replace('support-inbound@mail.svc.test', address);
    await client().sendMail({ envelope: { from: 'ada@example.org', to: [address] }, raw });
    const [m] = await processed(acct.accountId, 1);
    const c = await conversationOf(acct.accountId, m!.conversation_id!);
    assert.deepEqual([c.channel, c.title, c.visitor_email], ['Email', 'Re: Your password', 'ada@example.org']);
    assert.deepEqual(c.questions, ['Thanks, that worked! One more thing: can I change my email address?']);
    // In the inbox it is marked as mail, with the sender's address.
    const [owner] = (await listAccountMembers(acct.accountId)).members;
    // Open while the AI answers, Waiting once its declined answer hands it to the team (it may be either by now): read in that order.
    const inView = async (view: 'all_open' | 'waiting') =>
      (await listInboxConversations({ accountId: acct.accountId, userId: owner!.user_id, role: 'owner' }, { view })).conversations.find(
        (x) => x.id === m!.conversation_id,
      );
    assert.equal(((await inView('all_open')) ?? (await inView('waiting')))?.email_from, 'ada@example.org');
    // A second mail of another sender starts its own conversation on the same channel.
    await client().sendMail(mail(address, { subject: 'Opening hours' }));
    const all = await processed(acct.accountId, 2);
    const second = await conversationOf(acct.accountId, all[1]!.conversation_id!);
    assert.equal(second.channel, 'Email');
    assert.notEqual(all[1]!.conversation_id, m!.conversation_id);
  });

  it('threading: a reply naming a Message-ID svc received joins its conversation, from another address too; a resolved one reopens', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const [ada, grace] = ['ada', 'grace'].map((n) => `${n}-${randomUUID().slice(0, 8)}@example.org`);
    const first = `<${randomUUID()}@example.org>`;
    await client().sendMail(mail(address, { from: `Ada <${ada}>`, subject: 'Kettle lid', messageId: first }));
    const [a] = await processed(acct.accountId, 1);
    // Her colleague answers in the thread (a changed subject, another address): the same conversation.
    const second = `<${randomUUID()}@example.org>`;
    await client().sendMail({
      ...mail(address, { from: `Grace <${grace}>`, subject: 'Fwd: about the lid', messageId: second }),
      inReplyTo: first,
      references: [first],
    });
    const both = await processed(acct.accountId, 2);
    assert.equal(both[1]!.conversation_id, a!.conversation_id);
    // Two visitor messages: questions to the AI, or (the AI declined the first: no knowledge here) kept for the person now handling it.
    assert.equal(await visitorMessagesIn(acct.accountId, a!.conversation_id!, 2), 2);
    // Resolved, then a reply further down the thread (References only): it reopens.
    const [owner] = (await listAccountMembers(acct.accountId)).members;
    await resolveConversation({ accountId: acct.accountId, userId: owner!.user_id, role: 'owner' }, { conversation_id: a!.conversation_id });
    await client().sendMail({
      ...mail(address, { from: ada, subject: 'Re: Kettle lid', messageId: `<${randomUUID()}@example.org>` }),
      references: [first, second],
    });
    const all = await processed(acct.accountId, 3);
    assert.equal(all[2]!.conversation_id, a!.conversation_id);
    const [c] = await rows<{ status: string }>(await getDb(), sql`SELECT status FROM conversations WHERE id = ${a!.conversation_id}`);
    assert.notEqual(c!.status, 'Resolved');
    assert.equal(await visitorMessagesIn(acct.accountId, a!.conversation_id!, 3), 3);
    // A reply naming ids svc never saw starts a new conversation.
    await client().sendMail({ ...mail(address, { from: ada, subject: 'New question' }), inReplyTo: '<unknown@example.org>' });
    const four = await processed(acct.accountId, 4);
    assert.notEqual(four[3]!.conversation_id, a!.conversation_id);
  });

  it('auto-replies, bulk mail and robot senders are kept for the team and never answered', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const ooo = fs.readFileSync('tests/fixtures/mail/auto-reply.eml', 'utf8').replace('support-inbound@mail.svc.test', address);
    await client().sendMail({ envelope: { from: `ooo-${randomUUID().slice(0, 8)}@example.org`, to: [address] }, raw: ooo });
    await client().sendMail({ ...mail(address, { from: 'no-reply@shop.example', subject: 'Your newsletter' }), headers: { 'List-Id': '<news.shop.example>' } });
    await client().sendMail(mail(address, { from: 'mailer-daemon@example.org', subject: 'Undeliverable' }));
    await client().sendMail(mail(address, { from: `someone@${DOMAIN}`, subject: 'From ourselves' }));
    const all = await processed(acct.accountId, 4);
    const db = await getDb();
    for (const m of all) {
      const kept = await rows<{ author: string }>(
        db,
        sql`SELECT author FROM conversation_messages WHERE conversation_id = ${m.conversation_id} AND account_id = ${acct.accountId}`,
      );
      assert.deepEqual(
        kept.map((k) => k.author),
        ['visitor'],
        `${m.subject}: kept as the visitor's message`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
    const [n] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM responses WHERE account_id = ${acct.accountId}`);
    assert.equal(n!.n, 0, 'the AI answered none of them');
  });

  it('with "AI answers email" off every mail waits for a person in the inbox (the widget\'s handoff switch does not matter)', async () => {
    const acct = await createTestAccount();
    const [owner] = (await listAccountMembers(acct.accountId)).members;
    const member = { accountId: acct.accountId, role: 'owner' as const };
    await saveEmailSettings(CLI, member, { ai_answers: false, acknowledge: false });
    assert.deepEqual(await getEmailSettings(acct.accountId), { ai_answers: false, acknowledge: false });
    assert.ok(owner);
    const { address } = await inboundAddress(acct.accountId);
    await client().sendMail(mail(address, { subject: 'A person please' }));
    const [m] = await processed(acct.accountId, 1);
    const db = await getDb();
    const [c] = await rows<{ status: string; handled_by: string }>(db, sql`SELECT status, handled_by FROM conversations WHERE id = ${m!.conversation_id}`);
    assert.deepEqual([c!.status, c!.handled_by], ['Waiting', 'human']);
    const kept = await rows<{ author: string; text: string }>(
      db,
      sql`SELECT author, text FROM conversation_messages WHERE conversation_id = ${m!.conversation_id} AND author = 'visitor'`,
    );
    assert.deepEqual(
      kept.map((k) => k.text),
      ['Hello, my order 4711 has not arrived yet.'],
    );
    const [n] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM responses WHERE account_id = ${acct.accountId}`);
    assert.equal(n!.n, 0);
    await assert.rejects(saveEmailSettings(CLI, { accountId: acct.accountId, role: 'agent' }, { ai_answers: true, acknowledge: false }), /role/);
    await assert.rejects(saveEmailSettings(CLI, member, { ai_answers: 'yes', acknowledge: false }), /ai_answers/);
  });

  it('"Show original": the transcript lists the mail received and serves each as it arrived, as plain text, to the account\'s members only', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    await client().sendMail(mail(address, { subject: 'Original <b>please</b>', text: 'Hello <script>alert(1)</script>' }));
    const [m] = await processed(acct.accountId, 1);
    const { cookie } = await signIn(server.url, acct.email, acct.password);
    const page = await (await fetch(`${server.url}/conversations/${m!.conversation_id}`, { headers: { cookie: cookie! } })).text();
    assert.match(page, /Show original/);
    const url = `${server.url}/conversations/${m!.conversation_id}/original/${m!.id}`;
    const res = await fetch(url, { headers: { cookie: cookie! } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.match(await res.text(), /^Subject: Original <b>please<\/b>/m);
    // Another account's member, a wrong conversation, garbage ids: not found.
    const other = await createTestAccount();
    const stranger = await signIn(server.url, other.email, other.password);
    assert.equal((await fetch(url, { headers: { cookie: stranger.cookie! } })).status, 404);
    for (const bad of [
      `/conversations/${randomUUID()}/original/${m!.id}`,
      `/conversations/${m!.conversation_id}/original/abc`,
      `/conversations/x/original/99999999999999999999`,
    ]) {
      assert.equal((await fetch(`${server.url}${bad}`, { headers: { cookie: cookie! } })).status, 404, bad);
    }
  });

  it('the same Message-ID from the same sender twice is one message; from another sender it is another', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const messageId = `<${randomUUID()}@example.org>`;
    await client().sendMail(mail(address, { from: 'bob@example.org', messageId }));
    await client().sendMail(mail(address, { from: 'bob@example.org', messageId }));
    await client().sendMail(mail(address, { from: 'carol@example.org', messageId }));
    const all = await processed(acct.accountId, 3);
    assert.deepEqual(all.map((m) => m.status).sort(), ['done', 'done', 'duplicate']);
    const bob = all.filter((m) => m.from_address === 'bob@example.org');
    assert.equal(bob[0]!.conversation_id, bob[1]!.conversation_id, 'the copy lands in the same conversation');
    assert.equal((await conversationOf(acct.accountId, bob[0]!.conversation_id!)).questions.length, 1, 'as one message');
  });

  it('a message over INBOUND_MAIL_MAX_BYTES is refused with 552 and nothing is stored', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const r = await refusal(client().sendMail(mail(address, { text: 'x'.repeat(MAX_BYTES + 10) })));
    assert.equal(r.code, 552, r.response);
    assert.equal((await stored(acct.accountId)).length, 0);
  });

  it('beyond the per-sender rate a sender is told 451 (try later), never dropped silently', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const from = `flood-${randomUUID().slice(0, 8)}@example.org`;
    for (let i = 0; i < PER_SENDER; i++) await client().sendMail(mail(address, { from }));
    const r = await refusal(client().sendMail(mail(address, { from })));
    assert.deepEqual([r.code, r.command], [451, 'MAIL FROM'], r.response);
    assert.equal((await stored(acct.accountId)).length, PER_SENDER);
  });

  it('offers STARTTLS and takes mail over it', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const sent = await client({ requireTLS: true }).sendMail(mail(address));
    assert.match(sent.response, /^250 /);
  });

  it('answers commands out of order and garbage with SMTP errors, and keeps serving', async () => {
    const lines = await talk(['EHLO test', 'RCPT TO:<x@y>', 'DATA', 'MAIL FROM:<not an address', 'NONSENSE', 'QUIT']);
    const codes = lines.map((l) => Number(l.slice(0, 3)));
    assert.equal(codes[0], 220);
    assert.ok(
      codes.every((c) => c >= 200 && c < 600),
      lines.join('\n'),
    );
    assert.ok(codes.filter((c) => c >= 500).length >= 3, lines.join('\n'));
    const { address } = await inboundAddress((await createTestAccount()).accountId);
    await client().sendMail(mail(address));
  });

  it('a mail built to make the reply parser slow is read off the main thread and still processed', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    await client().sendMail(mail(address, { subject: 'Hostile', text: `${'>'.repeat(60_000)}x` }));
    const [m] = await processed(acct.accountId, 1);
    delay.disable();
    assert.equal(m!.status, 'done');
    // On the main thread this text cost seconds of pattern matching (docs/decisions/email.md).
    assert.ok(delay.max / 1e6 < 1000, `the event loop stalled ${Math.round(delay.max / 1e6)} ms`);
  });

  it('a message whose processing instance died (its lease lapsed) is processed by the next pass', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const db = await getDb();
    // Stored and claimed by an instance that then died: its lease still runs, the status is still `stored`.
    const raw = Buffer.from(
      `From: ada@example.org\r\nTo: ${address}\r\nSubject: Claimed then lost\r\nMessage-ID: <${randomUUID()}@example.org>\r\n\r\nHello\r\n`,
    );
    await rows(
      db,
      sql`INSERT INTO inbound_mails (account_id, envelope_from, recipient, raw, size, lease_until, attempts)
      VALUES (${acct.accountId}, 'ada@example.org', 'x', ${raw}, ${raw.length}, now() + interval '1 hour', 1) RETURNING id`,
    );
    await processInboundMail();
    assert.equal((await stored(acct.accountId))[0]!.status, 'stored', 'leased elsewhere: not taken');
    await rows(db, sql`UPDATE inbound_mails SET lease_until = now() - interval '1 second' WHERE account_id = ${acct.accountId} RETURNING id`);
    const [m] = await processed(acct.accountId, 1);
    assert.deepEqual([m!.status, m!.subject], ['done', 'Claimed then lost']);
  });
});

describe("a mail's attachments", () => {
  type ApiMessage = {
    role: string;
    content: string;
    attachments: Array<{ upload_id: string; filename: string; content_type: string; size: number; url: string }>;
  };
  /** The visitor's message of a conversation as the Customer API gives it. */
  async function visitorMessage(key: string, conversationId: string): Promise<ApiMessage> {
    const res = await api(server.url, key)(`/customer-api/v2/conversation/${conversationId}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const message = (res.body.messages as ApiMessage[]).find((m) => m.role === 'user');
    assert.ok(message, JSON.stringify(res.body.messages));
    return message;
  }

  it('a PDF and a PNG are stored by the upload rules and shown with the message (API, inbox, transcript); a tiny inline logo is not; processing again stores none twice', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    const pdf = tinyPdf('Invoice 4711');
    await client().sendMail({
      ...mail(address, { subject: 'Broken lid' }),
      html: '<p>The lid arrived broken, see the photo.</p><img src="cid:logo@shop.example">',
      attachments: [
        { filename: 'invoice.pdf', content: pdf, contentType: 'application/octet-stream' },
        { filename: 'photo.png', content: tinyPng() },
        { filename: 'logo.png', content: tinyPng(), cid: 'logo@shop.example' },
      ],
    });
    const [m] = await processed(acct.accountId, 1);
    assert.equal(m!.status, 'done');
    // Asked of the AI: the question is listed with its answer (the runner stores both).
    await conversationOf(acct.accountId, m!.conversation_id!);
    const message = await visitorMessage(acct.key, m!.conversation_id!);
    assert.deepEqual(
      message.attachments.map((a) => [a.filename, a.content_type, a.size]),
      [
        ['invoice.pdf', 'application/pdf', pdf.length],
        ['photo.png', 'image/png', tinyPng().length],
      ],
    );
    assert.doesNotMatch(message.content, /not kept/);
    const download = await fetch(`${server.url}${message.attachments[0]!.url}`, { headers: { authorization: `Bearer ${acct.key}` } });
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), pdf);
    const { cookie } = await signIn(server.url, acct.email, acct.password);
    for (const page of [`/inbox/${m!.conversation_id}`, `/conversations/${m!.conversation_id}`]) {
      const html = await (await fetch(`${server.url}${page}`, { headers: { cookie: cookie! } })).text();
      assert.match(html, /invoice\.pdf/, page);
      assert.match(html, /photo\.png/, page);
      assert.doesNotMatch(html, /logo\.png/, page);
    }
    // Processed again (its instance died before marking it done): the same message, the same two files.
    const db = await getDb();
    await rows(db, sql`UPDATE inbound_mails SET status = 'stored', lease_until = NULL WHERE id = ${m!.id} RETURNING id`);
    await processed(acct.accountId, 1);
    assert.equal((await visitorMessage(acct.key, m!.conversation_id!)).attachments.length, 2);
    const [n] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM attachments WHERE account_id = ${acct.accountId}`);
    assert.equal(n!.n, 2);
  });

  it('a disguised executable, a file over UPLOAD_MAX_BYTES and files beyond five are left out with a line each; the mail is processed and keeps the rest', async () => {
    const acct = await createTestAccount();
    await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: false, acknowledge: false });
    const { address } = await inboundAddress(acct.accountId);
    await client().sendMail({
      ...mail(address, { subject: 'Files', text: 'Here are the files.' }),
      attachments: [
        { filename: 'report.pdf', content: elfExecutable() },
        { filename: 'setup.pdf', content: mzExecutable() },
        { filename: 'big.png', content: pngOfSize(UPLOAD_MAX + 1) },
        { filename: 'notes.txt', content: 'Order 4711, blue kettle.' },
        { filename: 'a.txt', content: 'a' },
        { filename: 'b.txt', content: 'b' },
      ],
    });
    const [m] = await processed(acct.accountId, 1);
    assert.equal(m!.status, 'done');
    // "AI answers email" off: the message waits for a person, its files with it.
    const message = await visitorMessage(acct.key, m!.conversation_id!);
    assert.deepEqual(
      message.attachments.map((a) => [a.filename, a.content_type]),
      [
        ['notes.txt', 'text/plain'],
        ['a.txt', 'text/plain'],
      ],
    );
    const lines = message.content.split('\n');
    assert.equal(lines[0], 'Here are the files.');
    assert.ok(
      lines.some((l) => /^\[Attachment not kept: report\.pdf: executables are not accepted\./.test(l)),
      message.content,
    );
    assert.ok(
      lines.some((l) => /^\[Attachment not kept: setup\.pdf: executables are not accepted\./.test(l)),
      message.content,
    );
    assert.ok(lines.includes(`[Attachment not kept: big.png: files may be at most ${UPLOAD_MAX} bytes.]`), message.content);
    assert.ok(lines.includes('[1 more attachment not kept: at most 5 files per message.]'), message.content);
    const [n] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM attachments WHERE account_id = ${acct.accountId}`);
    assert.equal(n!.n, 2, 'nothing of a refused file is stored');
  });

  it("a file past the account's UPLOAD_QUOTA_BYTES_PER_ACCOUNT is left out with a line; the mail is processed and keeps the rest; another account's quota is its own", async () => {
    const acct = await createTestAccount();
    await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: false, acknowledge: false });
    const { address } = await inboundAddress(acct.accountId);
    const size = 10 * 1024;
    assert.ok(size <= UPLOAD_MAX && 2 * size <= UPLOAD_QUOTA && 3 * size > UPLOAD_QUOTA);
    const files = [
      { filename: 'first.png', content: pngOfSize(size) },
      { filename: 'second.png', content: pngOfSize(size) },
      { filename: 'third.png', content: pngOfSize(size) },
      { filename: 'notes.txt', content: 'Order 4711, blue kettle.' },
    ];
    await client().sendMail({ ...mail(address, { subject: 'Photos', text: 'Here are the photos.' }), attachments: files });
    const [m] = await processed(acct.accountId, 1);
    assert.equal(m!.status, 'done');
    const message = await visitorMessage(acct.key, m!.conversation_id!);
    assert.deepEqual(
      message.attachments.map((a) => [a.filename, a.size]),
      [
        ['first.png', size],
        ['second.png', size],
        ['notes.txt', 24],
      ],
    );
    assert.deepEqual(message.content.split('\n'), [
      'Here are the photos.',
      '',
      `[Attachment not kept: third.png: this account's upload storage is full (${2 * size} of ${UPLOAD_QUOTA} bytes in use); unused uploads are deleted after a day.]`,
    ]);
    const db = await getDb();
    const [n] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM attachments WHERE account_id = ${acct.accountId}`);
    assert.equal(n!.n, 3, 'nothing of the refused file is stored');
    // The quota is per account: another account takes the same file.
    const other = await createTestAccount();
    await saveEmailSettings(CLI, { accountId: other.accountId, role: 'owner' }, { ai_answers: false, acknowledge: false });
    await client().sendMail({ ...mail((await inboundAddress(other.accountId)).address, { subject: 'Photo' }), attachments: [files[2]!] });
    const [o] = await processed(other.accountId, 1);
    assert.deepEqual(
      (await visitorMessage(other.key, o!.conversation_id!)).attachments.map((a) => a.filename),
      ['third.png'],
    );
  });
});

describe('bad input (docs/decisions/email.md "Bad input")', () => {
  it('a zip bomb is refused by the upload rules, a DOCX bomb by the document limits; the mail is answered and keeps the rest', {
    timeout: 60_000,
  }, async () => {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'hours.md', '# Opening hours\n\nWe are open Monday to Friday from nine to five.\n');
    const { address } = await inboundAddress(acct.accountId);
    // Each about 12 KB on the wire, 12 MiB once inflated; the DOCX's part claims 1,000 bytes.
    const zipBomb = zipDeflated([{ name: 'hours.bin', deflated: deflatedRepeat('\0', 12), size: 12 * 1024 * 1024, crc: 0 }]);
    const docxBomb = docxBombLying(12);
    assert.ok(zipBomb.length < UPLOAD_MAX && docxBomb.length < UPLOAD_MAX);
    await client().sendMail({
      ...mail(address, { subject: 'Hours', text: 'When are you open?' }),
      attachments: [
        { filename: 'hours.zip', content: zipBomb },
        { filename: 'hours.docx', content: docxBomb },
        { filename: 'notes.txt', content: 'Order 4711.' },
      ],
    });
    const [m] = await processed(acct.accountId, 1);
    assert.equal(m!.status, 'done');
    // Answered: the runner read the attached documents (and refused the bomb) before answering.
    assert.deepEqual((await conversationOf(acct.accountId, m!.conversation_id!)).questions.length, 1);
    const res = await api(server.url, acct.key)(`/customer-api/v2/conversation/${m!.conversation_id}`);
    const message = (res.body.messages as Array<{ role: string; content: string; attachments: Array<{ filename: string }> }>).find((x) => x.role === 'user')!;
    assert.deepEqual(
      message.attachments.map((a) => a.filename),
      ['hours.docx', 'notes.txt'],
    );
    assert.match(message.content, /\[Attachment not kept: hours\.zip: ZIP archives other than \.docx are not accepted\./);
    const db = await getDb();
    const docs = await rows<{ filename: string }>(
      db,
      sql`SELECT filename FROM kb_documents WHERE account_id = ${acct.accountId} AND conversation_id = ${m!.conversation_id} ORDER BY filename`,
    );
    assert.deepEqual(
      docs.map((d) => d.filename),
      ['notes.txt'],
      'the DOCX bomb was not read into the knowledge base',
    );
  });

  it("a mail of 2,000 parts (past the MIME parser's bound) is kept from its sender for a person, its body named unreadable", async () => {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'hours.md', '# Opening hours\n\nWe are open Monday to Friday from nine to five.\n');
    const { address } = await inboundAddress(acct.accountId);
    const jo = `jo-${randomUUID().slice(0, 8)}@example.org`;
    const raw = `From: Jo <${jo}>\r\nTo: ${address}\r\nSubject: Parts\r\nContent-Type: multipart/mixed; boundary=zz\r\n\r\n${'--zz\r\n\r\nx\r\n'.repeat(2000)}--zz--\r\n`;
    await client().sendMail({ envelope: { from: jo, to: [address] }, raw });
    const [m] = await processed(acct.accountId, 1);
    assert.deepEqual([m!.status, m!.from_address, m!.subject], ['done', jo, 'Parts']);
    const db = await getDb();
    const [c] = await rows<{ status: string }>(db, sql`SELECT status FROM conversations WHERE id = ${m!.conversation_id}`);
    assert.equal(c!.status, 'Waiting');
    const [kept] = await rows<{ text: string }>(
      db,
      sql`SELECT text FROM conversation_messages WHERE conversation_id = ${m!.conversation_id} AND account_id = ${acct.accountId} AND author = 'visitor'`,
    );
    assert.match(kept!.text, /^\[The body of this mail could not be read/);
  });

  it('a 25 MB header is refused with 552 while it arrives, and nothing is stored', async () => {
    const acct = await createTestAccount();
    const { address } = await inboundAddress(acct.accountId);
    // Folded lines of one header field, without SIZE at MAIL FROM: the listener counts the data itself.
    const header = `X-Filler: ${`${'a'.repeat(76)}\r\n `.repeat(Math.ceil((25 * 1024 * 1024) / 79))}a`;
    const lines = await talk([
      'EHLO test',
      'MAIL FROM:<ada@example.org>',
      `RCPT TO:<${address}>`,
      'DATA',
      `${header}\r\nFrom: ada@example.org\r\n\r\nHello\r\n.`,
    ]);
    assert.equal(lines.at(-1)!.slice(0, 3), '552', lines.join('\n'));
    assert.equal((await stored(acct.accountId)).length, 0);
    // The listener keeps serving.
    await client().sendMail(mail(address));
  });

  it('a From and Subject carrying encoded CR/LF: the acknowledgement has no injected header, one To, its Subject on one line', {
    timeout: 60_000,
  }, async () => {
    const acct = await createTestAccount();
    await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: false, acknowledge: true });
    const { address } = await inboundAddress(acct.accountId);
    const ivy = `ivy-${randomUUID().slice(0, 8)}@example.org`;
    const injected = `=?utf-8?B?${Buffer.from('x\r\nBcc: victim@evil.test').toString('base64')}?=`;
    const raw = `From: ${injected} <${ivy}>\r\nTo: ${address}\r\nSubject: ${injected}\r\nMessage-ID: <${randomUUID()}@example.org>\r\n\r\nHello\r\n`;
    await client().sendMail({ envelope: { from: ivy, to: [address] }, raw });
    const ack = await outbox.waitFor((x) => x.envelopeTo.includes(ivy), 30_000);
    assert.deepEqual(ack.envelopeTo, [ivy]);
    const fields = ack.header.split(/\r?\n(?![ \t])/);
    assert.ok(!fields.some((f) => /^bcc:/i.test(f)), ack.header);
    assert.deepEqual(
      fields.filter((f) => /^subject:/i.test(f)),
      ['Subject: Re: x Bcc: victim@evil.test'],
    );
    assert.equal(fields.filter((f) => /^to:/i.test(f)).length, 1, ack.header);
    assert.deepEqual(
      fields.filter((f) => /^to:/i.test(f)),
      [`To: ${ivy}`],
    );
    assert.equal(ack.subject, 'Re: x Bcc: victim@evil.test');
    assert.equal(outbox.received.filter((x) => x.envelopeTo.includes('victim@evil.test')).length, 0);
  });
});

/** A raw SMTP conversation: sends each line after the previous reply and returns every reply's last line. */
async function talk(commands: string[]): Promise<string[]> {
  const socket = net.connect(port, '127.0.0.1');
  const replies: string[] = [];
  let buffer = '';
  let waiting: (() => void) | null = null;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    buffer += d;
    let nl = buffer.indexOf('\r\n');
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 2);
      if (/^\d{3} /.test(line)) {
        replies.push(line);
        waiting?.();
      }
      nl = buffer.indexOf('\r\n');
    }
  });
  const next = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no reply ${n}: ${replies.join(' | ')}`)), 5000);
      const check = () => {
        if (replies.length >= n) {
          clearTimeout(t);
          waiting = null;
          resolve();
        }
      };
      waiting = check;
      check();
    });
  await next(1);
  for (const [i, c] of commands.entries()) {
    socket.write(`${c}\r\n`);
    await next(i + 2);
  }
  socket.destroy();
  return replies;
}

describe("the AI's answers by mail", () => {
  it('answers in the thread within 30 s: Re: subject, In-Reply-To/References, sources, the automatic line, From the account, Reply-To the tagged address; a reply to it joins the conversation', {
    timeout: 60_000,
  }, async () => {
    const acct = await createTestAccount('Bluebird Bakery');
    await addKnowledge(acct.accountId, 'returns.md', '# Returns\n\nYou can return any item within 30 days for a full refund.\n');
    const { address } = await inboundAddress(acct.accountId);
    const ada = `ada-${randomUUID().slice(0, 8)}@example.org`;
    const asked = `<${randomUUID()}@example.org>`;
    const started = Date.now();
    await client().sendMail(mail(address, { from: `Ada <${ada}>`, subject: 'Returns', text: 'How many days do I have to return an item?', messageId: asked }));
    const answer = await outbox.waitFor((m) => m.envelopeTo.includes(ada), 30_000);
    assert.ok(Date.now() - started < 30_000);
    assert.equal(answer.subject, 'Re: Returns');
    assert.match(answer.text, /30 days for a full refund/);
    assert.match(answer.text, /Sources: Returns/);
    assert.doesNotMatch(answer.text, /\*\*/, 'no Markdown emphasis marks in the mail');
    assert.match(answer.text, /written automatically by the assistant of Bluebird Bakery\. Answer this email to reach the team\./);
    assert.match(answer.from, /Bluebird Bakery/);
    assert.equal(answer.inReplyTo, asked);
    assert.deepEqual(answer.references, [asked]);
    assert.match(answer.messageId ?? '', new RegExp(`@${DOMAIN.replace(/\./g, '\\.')}>$`));
    const local = address.split('@')[0]!;
    assert.match(answer.replyTo ?? '', new RegExp(`^${local}\\+[a-z2-7]{10}@${DOMAIN.replace(/\./g, '\\.')}$`));
    assert.match(answer.header, /^Auto-Submitted: auto-replied\r?$/im, 'an automatic reply: no helpdesk or autoresponder answers it');
    // Ada answers svc's mail (to its Reply-To, naming its Message-ID): the same conversation.
    await client().sendMail({
      from: ada,
      to: answer.replyTo!,
      subject: 'Re: Returns',
      text: 'And do you pay the postage?',
      inReplyTo: answer.messageId!,
      references: [asked, answer.messageId!],
    });
    const all = await processed(acct.accountId, 2);
    assert.equal(all[1]!.conversation_id, all[0]!.conversation_id);
    // Even with the headers stripped, the tagged address alone threads it.
    await client().sendMail({ from: ada, to: answer.replyTo!, subject: 'one more', text: 'Thanks!' });
    const three = await processed(acct.accountId, 3);
    assert.equal(three[2]!.conversation_id, all[0]!.conversation_id);
  });

  it('a question the AI declines waits for a person and gets no AI mail; beyond EMAIL_ANSWERS_PER_SENDER_PER_HOUR answers are not mailed', {
    timeout: 60_000,
  }, async () => {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'hours.md', '# Opening hours\n\nWe are open Monday to Friday from nine to five.\n');
    const { address } = await inboundAddress(acct.accountId);
    const bob = `bob-${randomUUID().slice(0, 8)}@example.org`;
    await client().sendMail(mail(address, { from: bob, subject: 'Quantum physics', text: 'Can you explain the theory of quantum chromodynamics?' }));
    const [m] = await processed(acct.accountId, 1);
    const db = await getDb();
    let status = '';
    for (let i = 0; i < 100 && status !== 'Waiting'; i++) {
      status = (await rows<{ status: string }>(db, sql`SELECT status FROM conversations WHERE id = ${m!.conversation_id}`))[0]!.status;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 'Waiting');
    // The hourly cap: three answerable questions from one sender, two answers mailed.
    const carol = `carol-${randomUUID().slice(0, 8)}@example.org`;
    for (let i = 0; i < ANSWERS_PER_HOUR + 1; i++) await client().sendMail(mail(address, { from: carol, subject: `Hours ${i}`, text: 'When are you open?' }));
    await processed(acct.accountId, 2 + ANSWERS_PER_HOUR);
    await new Promise((r) => setTimeout(r, 5000));
    assert.equal(outbox.received.filter((x) => x.envelopeTo.includes(carol)).length, ANSWERS_PER_HOUR);
    assert.equal(outbox.received.filter((x) => x.envelopeTo.includes(bob)).length, 0, 'the declined question got no AI mail');
    // The cap is the account's own: another account still answers Carol (a sender spoofing her address at one account never mutes her at another).
    const other = await createTestAccount();
    await addKnowledge(other.accountId, 'hours.md', '# Opening hours\n\nWe are open Monday to Friday from nine to five.\n');
    await client().sendMail(mail((await inboundAddress(other.accountId)).address, { from: carol, subject: 'Hours elsewhere', text: 'When are you open?' }));
    const elsewhere = await outbox.waitFor((x) => x.envelopeTo.includes(carol) && x.subject === 'Re: Hours elsewhere', 30_000);
    assert.match(elsewhere.text, /Monday to Friday/);
  });

  it('"Send a test email" on /email: the mail arrives through the listener as a test (no conversation, never answered); a forged test header is an ordinary mail; no listener → refused', {
    timeout: 60_000,
  }, async () => {
    const acct = await createTestAccount();
    const owner = { accountId: acct.accountId, role: 'owner' as const };
    const by = memberBy(acct.email, '127.0.0.1');
    const { received_at } = await sendTestEmail(by, owner);
    assert.match(received_at, /^\d{2}:\d{2}:\d{2}$/);
    const [m] = await stored(acct.accountId);
    assert.equal(m!.status, 'test');
    assert.equal(m!.conversation_id, null);
    assert.equal(m!.from_address, `svc-test@${DOMAIN}`);
    assert.match(m!.subject ?? '', /^svc test email \d{2}:\d{2}:\d{2} UTC$/);
    assert.match(Buffer.from(m!.raw).toString('utf8'), /^Auto-Submitted: auto-generated\r?$/im);
    const db = await getDb();
    const count = async (table: string) =>
      (await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)} WHERE account_id = ${acct.accountId}`))[0]!.n;
    assert.deepEqual([await count('conversations'), await count('mails')], [0, 0], 'no conversation, nothing in the outbox');
    assert.equal(outbox.received.filter((x) => x.envelopeTo.some((t) => t.includes('svc-test'))).length, 0, 'nothing mailed back');
    const [member] = (await listAccountMembers(acct.accountId)).members;
    const inbox = await listInboxConversations({ accountId: acct.accountId, userId: member!.user_id, role: 'owner' }, { view: 'all_open' });
    assert.equal(inbox.conversations.length, 0, 'nothing waits in the inbox');
    assert.equal((await listAudit({ accountId: acct.accountId })).entries[0]?.action, 'email.test_sent');
    // The page: the button, and the time the test mail arrived.
    const { cookie } = await signIn(server.url, acct.email, acct.password);
    const html = await (await fetch(`${server.url}/email`, { headers: { cookie: cookie! } })).text();
    assert.match(html, />Send a test email</);
    assert.ok(html.includes(`Test email received at <!-- -->${received_at}`) || html.includes(`Test email received at ${received_at}`), 'the result shows');
    // The header is bound to the account and the Message-ID: a copied or forged one is an ordinary mail.
    const raw = Buffer.from(m!.raw).toString('utf8');
    assert.ok(isSvcTestMail(acct.accountId, await readMail(Buffer.from(raw))));
    assert.ok(!isSvcTestMail(acct.accountId + 1, await readMail(Buffer.from(raw))), 'another account');
    assert.ok(!isSvcTestMail(acct.accountId, await readMail(Buffer.from(raw.replace(/^X-Svc-Test: .*$/im, 'X-Svc-Test: forged')))), 'a forged header');
    // No listener in this process: refused with the page's warning.
    await assert.rejects(sendTestEmail(by, owner, null), (e: Error) => e.message === NOT_LISTENING);
  });
});

describe('"Acknowledge new emails"', () => {
  /** svc's mails to an address in the outbox (written, sent or not). */
  const outboxTo = async (to: string) => (await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM mails WHERE "to" = ${to}`))[0]!.n;

  /** Once the answers loop has handed the conversation's declined answer to the team (the acknowledgement is written in that step). */
  async function handedOff(accountId: number, conversationId: string): Promise<void> {
    const db = await getDb();
    for (let i = 0; i < 400; i++) {
      const [row] = await rows<{ n: number }>(
        db,
        sql`SELECT count(*)::int AS n FROM email_answers e JOIN responses r ON r.id = e.response_id
        WHERE r.conversation_id = ${conversationId} AND e.account_id = ${accountId} AND e.outcome = 'handed_off'`,
      );
      if (row!.n > 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail('the declined answer was not handed to the team');
  }

  const declinable = { subject: 'Quantum physics', text: 'Can you explain the theory of quantum chromodynamics?' };

  it('is off by default: /email shows it unchecked, and a declined question gets no mail at all', { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    assert.equal((await getEmailSettings(acct.accountId)).acknowledge, false);
    const { cookie } = await signIn(server.url, acct.email, acct.password);
    const page = await (await fetch(`${server.url}/email`, { headers: { cookie: cookie! } })).text();
    const box = /<input[^>]*name="acknowledge"[^>]*>/.exec(page)?.[0];
    assert.ok(box && page.includes('Acknowledge new emails'), 'the checkbox is on /email');
    assert.doesNotMatch(box, /checked/);
    await addKnowledge(acct.accountId, 'hours.md', '# Opening hours\n\nWe are open Monday to Friday from nine to five.\n');
    const { address } = await inboundAddress(acct.accountId);
    const dan = `dan-${randomUUID().slice(0, 8)}@example.org`;
    await client().sendMail(mail(address, { from: dan, ...declinable }));
    const [m] = await processed(acct.accountId, 1);
    await handedOff(acct.accountId, m!.conversation_id!);
    assert.equal(await outboxTo(dan), 0);
  });

  it('a declined answer whose handoff another instance made first is still handed_off and acknowledged (its pass saw the conversation with a person)', {
    timeout: 60_000,
  }, async () => {
    await stopEmailAnswers(); // this process plays the second instance; its own loop must not take the answer first
    try {
      const acct = await createTestAccount();
      await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: true, acknowledge: true });
      await addKnowledge(acct.accountId, 'hours.md', '# Opening hours\n\nWe are open Monday to Friday from nine to five.\n');
      const fay = `fay-${randomUUID().slice(0, 8)}@example.org`;
      await client().sendMail(mail((await inboundAddress(acct.accountId)).address, { from: fay, ...declinable }));
      const [m] = await processed(acct.accountId, 1);
      const db = await getDb();
      let declined = false;
      for (let i = 0; i < 200 && !declined; i++) {
        declined =
          (await rows<{ d: boolean }>(db, sql`SELECT declined AS d FROM responses WHERE conversation_id = ${m!.conversation_id} AND declined`)).length > 0;
        if (!declined) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(declined, 'the AI declined');
      // The first instance's step: the handoff committed, its mark not yet written.
      await requestHandoff({ accountId: acct.accountId, conversationId: m!.conversation_id! }, { byMail: true });
      await handleEmailAnswers();
      const [e] = await rows<{ outcome: string }>(
        db,
        sql`SELECT e.outcome FROM email_answers e JOIN responses r ON r.id = e.response_id WHERE r.conversation_id = ${m!.conversation_id}`,
      );
      assert.equal(e?.outcome, 'handed_off');
      await outbox.waitFor((x) => x.envelopeTo.includes(fay), 30_000);
      assert.equal(await outboxTo(fay), 1, 'one acknowledgement');
    } finally {
      startEmailAnswers();
    }
  });

  it('on: a declined question gets one acknowledgement in its thread; a second mail while it waits and an auto-reply get none', {
    timeout: 60_000,
  }, async () => {
    const acct = await createTestAccount('Bluebird Bakery');
    await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: true, acknowledge: true });
    await addKnowledge(acct.accountId, 'hours.md', '# Opening hours\n\nWe are open Monday to Friday from nine to five.\n');
    const { address } = await inboundAddress(acct.accountId);
    const erin = `erin-${randomUUID().slice(0, 8)}@example.org`;
    const asked = `<${randomUUID()}@example.org>`;
    await client().sendMail(mail(address, { from: `Erin <${erin}>`, messageId: asked, ...declinable }));
    const ack = await outbox.waitFor((x) => x.envelopeTo.includes(erin), 30_000);
    assert.equal(ack.subject, 'Re: Quantum physics');
    assert.match(ack.text, /The team of Bluebird Bakery has received it and will answer you by email\./);
    assert.match(ack.from, /Bluebird Bakery/);
    assert.equal(ack.inReplyTo, asked);
    assert.deepEqual(ack.references, [asked]);
    assert.match(ack.messageId ?? '', new RegExp(`@${DOMAIN.replace(/\./g, '\\.')}>$`));
    const local = address.split('@')[0]!;
    assert.match(ack.replyTo ?? '', new RegExp(`^${local}\\+[a-z2-7]{10}@${DOMAIN.replace(/\./g, '\\.')}$`));
    const [first] = await processed(acct.accountId, 1);
    const db = await getDb();
    const status = async () => (await rows<{ status: string }>(db, sql`SELECT status FROM conversations WHERE id = ${first!.conversation_id}`))[0]!.status;
    assert.equal(await status(), 'Waiting');
    // Erin answers the acknowledgement, asking for a person: the same wait, no second mail.
    await client().sendMail({
      from: erin,
      to: ack.replyTo!,
      subject: 'Re: Quantum physics',
      text: 'I want to talk to a person please.',
      inReplyTo: ack.messageId!,
      references: [asked, ack.messageId!],
    });
    const two = await processed(acct.accountId, 2);
    assert.equal(two[1]!.conversation_id, first!.conversation_id);
    assert.equal(await status(), 'Waiting');
    assert.equal(await outboxTo(erin), 1, 'one acknowledgement per wait');
    // An auto-reply asking for a person is kept for the team, never answered.
    const robot = `frank-${randomUUID().slice(0, 8)}@example.org`;
    await client().sendMail({
      ...mail(address, { from: robot, subject: 'Out of office', text: 'I want to talk to a person.' }),
      headers: { 'Auto-Submitted': 'auto-replied' },
    });
    await processed(acct.accountId, 3);
    assert.equal(await outboxTo(robot), 0);
    assert.equal(outbox.received.filter((x) => x.envelopeTo.includes(erin)).length, 1);
  });

  it('on with "AI answers email" off: each mail that waits is acknowledged, within EMAIL_ANSWERS_PER_SENDER_PER_HOUR; an auto-reply is not', async () => {
    const acct = await createTestAccount();
    await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: false, acknowledge: true });
    const { address } = await inboundAddress(acct.accountId);
    const gina = `gina-${randomUUID().slice(0, 8)}@example.org`;
    for (let i = 0; i <= ANSWERS_PER_HOUR; i++) await client().sendMail(mail(address, { from: gina, subject: `Order ${i}` }));
    const robot = `hank-${randomUUID().slice(0, 8)}@example.org`;
    await client().sendMail({ ...mail(address, { from: robot, subject: 'Automatic reply' }), headers: { 'Auto-Submitted': 'auto-replied' } });
    const all = await processed(acct.accountId, ANSWERS_PER_HOUR + 2);
    assert.equal(new Set(all.map((m) => m.conversation_id)).size, ANSWERS_PER_HOUR + 2, 'a conversation each');
    assert.equal(await outboxTo(gina), ANSWERS_PER_HOUR);
    assert.equal(await outboxTo(robot), 0);
  });
});

describe('no mail loop (issue 34): two accounts whose customers forward to each other', () => {
  const RETURNS = '# Returns\n\nYou can return any item within 30 days for a full refund.\n';
  /** Silence that ends a loop: no svc mail, nothing in flight. */
  const QUIET_MS = 5000;
  /** Fields nodemailer writes itself from what it is given (the body's structure, the addressing, the thread). */
  const REWRITTEN = /^(?:content-type|content-transfer-encoding|mime-version|from|to|subject|date|message-id|in-reply-to|references|reply-to)$/i;
  /** What a hostile forwarder drops: every field that says a mail is automatic or bulk. */
  const AUTOMATIC = /^(?:auto-submitted|precedence|list-[a-z-]+)$/i;

  /** What svc mailed each way, answer or acknowledgement (the test's output). */
  const said = (loop: { toX: ReceivedMail[]; toY: ReceivedMail[] }) => {
    const kinds = (ms: ReceivedMail[]) => ms.map((m) => (/has received it/.test(m.text) ? 'acknowledgement' : 'answer')).join(', ') || 'nothing';
    return `svc mailed ${loop.toX.length + loop.toY.length}: to the mailbox forwarding to B ${kinds(loop.toX)}; to the one forwarding to A ${kinds(loop.toY)}`;
  };

  /** A header block's fields, unfolded. */
  const fieldsOf = (header: string) =>
    header
      .replace(/\r?\n[ \t]+/g, ' ')
      .split(/\r?\n/)
      .filter((l) => l.includes(':'))
      .map((l) => ({ key: l.slice(0, l.indexOf(':')).trim(), value: l.slice(l.indexOf(':') + 1).trim() }));

  /** The two accounts' mail: what grows while the loop runs, and what is still in flight (unprocessed, being answered, answered but not handled, unsent). */
  async function mailState(a: number, b: number) {
    const [s] = await rows<{ received: number; responses: number; handled: number; written: number; busy: number }>(
      await getDb(),
      sql`SELECT
        (SELECT count(*) FROM inbound_mails WHERE account_id IN (${a}, ${b}))::int AS received,
        (SELECT count(*) FROM responses WHERE account_id IN (${a}, ${b}))::int AS responses,
        (SELECT count(*) FROM email_answers WHERE account_id IN (${a}, ${b}))::int AS handled,
        (SELECT count(*) FROM mails WHERE account_id IN (${a}, ${b}))::int AS written,
        ((SELECT count(*) FROM inbound_mails WHERE account_id IN (${a}, ${b}) AND status = 'stored')
          + (SELECT count(*) FROM chat_answers WHERE account_id IN (${a}, ${b}) AND finished_at IS NULL)
          + (SELECT count(*) FROM responses r JOIN inbound_mails im
              ON im.account_id = r.account_id AND im.conversation_id = r.conversation_id AND im.client_message_id = r.client_message_id
              WHERE r.account_id IN (${a}, ${b}) AND im.status = 'done' AND r.error IS NULL
              AND NOT EXISTS (SELECT 1 FROM email_answers e WHERE e.response_id = r.id))
          + (SELECT count(*) FROM mails WHERE account_id IN (${a}, ${b}) AND status = 'pending'))::int AS busy`,
    );
    return s!;
  }

  /**
   * Accounts A and B, both automatic mails on and knowledge to answer from. Mailbox `x` forwards
   * everything to B, `y` to A, each writing the other into From (as a forwarder rewrites From to its
   * own mailbox), so an answer to a forwarded mail goes on to the other account: the chain closes.
   * One question from `x` to A starts it; the test relays every svc mail to `x` or `y` with a real
   * SMTP client until nothing moves for QUIET_MS (at most 40 s), then checks that nothing more comes.
   */
  async function mailLoop(x: string, y: string, forwarder: { strip: RegExp | null; thread: boolean }) {
    const a = await createTestAccount('Bluebird Bakery');
    const b = await createTestAccount('Redwing Rentals');
    for (const acct of [a, b]) {
      await saveEmailSettings(CLI, { accountId: acct.accountId, role: 'owner' }, { ai_answers: true, acknowledge: true });
      await addKnowledge(acct.accountId, 'returns.md', RETURNS);
    }
    const toA = (await inboundAddress(a.accountId)).address;
    const toB = (await inboundAddress(b.accountId)).address;
    const route = new Map([
      [x, { to: toB, from: y }],
      [y, { to: toA, from: x }],
    ]);
    const first = outbox.received.length;
    const svcMails = () => outbox.received.slice(first).filter((m) => m.envelopeTo.some((t) => route.has(t)));
    /** Each forwarded mail and svc's SMTP reply to it. */
    const hops: Array<{ to: string; code: number; response: string }> = [];
    const forward = async (m: ReceivedMail) => {
      const r = route.get(m.envelopeTo.find((t) => route.has(t))!)!;
      const fields = fieldsOf(m.header);
      const date = fields.find((f) => f.key.toLowerCase() === 'date')?.value;
      try {
        const sent = await client().sendMail({
          envelope: { from: r.from, to: [r.to] },
          from: r.from,
          to: m.to,
          subject: m.subject,
          text: m.text,
          ...(m.html ? { html: m.html } : {}),
          ...(date ? { date } : {}),
          ...(m.messageId ? { messageId: m.messageId } : {}),
          ...(m.replyTo ? { replyTo: m.replyTo } : {}),
          ...(forwarder.thread && m.inReplyTo ? { inReplyTo: m.inReplyTo, references: m.references } : {}),
          headers: fields.filter((f) => !REWRITTEN.test(f.key) && !forwarder.strip?.test(f.key)),
        });
        hops.push({ to: r.to, code: Number(sent.response.slice(0, 3)), response: sent.response });
      } catch (e) {
        const err = e as { responseCode?: number; response?: string };
        hops.push({ to: r.to, code: err.responseCode ?? 0, response: err.response ?? String(e) });
      }
    };
    await client().sendMail(mail(toA, { from: x, subject: 'Returns', text: 'How many days do I have to return an item?' }));
    const started = Date.now();
    let relayed = 0;
    let seen = '';
    let since = Date.now();
    let state = await mailState(a.accountId, b.accountId);
    for (;;) {
      const mails = svcMails();
      while (relayed < mails.length) await forward(mails[relayed++]!);
      state = await mailState(a.accountId, b.accountId);
      const now = JSON.stringify([relayed, state]);
      if (now !== seen) [seen, since] = [now, Date.now()];
      else if (state.busy === 0 && Date.now() - since >= QUIET_MS) break;
      assert.ok(Date.now() - started < 40_000, `the loop did not go quiet within 40 s: ${now}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Quiet: nothing more comes.
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(svcMails().length, relayed, 'no svc mail after the quiet');
    assert.deepEqual(await mailState(a.accountId, b.accountId), state, 'nothing more received, answered or written after the quiet');
    // Every forwarded mail was taken (250) and stored; all processed.
    assert.deepEqual(
      hops.filter((h) => h.code !== 250),
      [],
      'no refusal, not even a 451: each forwarding mailbox sent within INBOUND_MAILS_PER_SENDER_PER_MINUTE',
    );
    const atA = await stored(a.accountId);
    const atB = await stored(b.accountId);
    assert.equal(atA.length, 1 + hops.filter((h) => h.to === toA).length);
    assert.equal(atB.length, hops.filter((h) => h.to === toB).length);
    assert.deepEqual([...new Set([...atA, ...atB].map((m) => m.status))], ['done']);
    const sent = svcMails();
    return { a, b, atA, atB, hops, toX: sent.filter((m) => m.envelopeTo.includes(x)), toY: sent.filter((m) => m.envelopeTo.includes(y)) };
  }

  it('a forwarder that keeps the headers (Auto-Submitted survives, From rewritten): A answers once, B keeps it for the team and mails nothing', {
    timeout: 60_000,
  }, async (t) => {
    const r = randomUUID().slice(0, 8);
    const [x, y] = [`fwd-to-b-${r}@forward.example`, `fwd-to-a-${r}@forward.example`];
    const loop = await mailLoop(x, y, { strip: null, thread: true });
    t.diagnostic(said(loop));
    assert.equal(loop.toX.length, 1, "A's answer");
    assert.match(loop.toX[0]!.text, /30 days for a full refund/);
    assert.equal(loop.toY.length, 0, 'B answers nothing');
    assert.equal(loop.hops.length, 1);
    const [kept] = loop.atB;
    assert.match(Buffer.from(kept!.raw).toString('utf8'), /^Auto-Submitted: auto-replied\r?$/im, 'forwarded as it came');
    assert.equal(kept!.from_address, y);
    const db = await getDb();
    const visitor = await rows<{ author: string }>(
      db,
      sql`SELECT author FROM conversation_messages WHERE conversation_id = ${kept!.conversation_id} AND account_id = ${loop.b.accountId}`,
    );
    assert.deepEqual(
      visitor.map((m) => m.author),
      ['visitor'],
      "kept as the visitor's message",
    );
    const [n] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM responses WHERE account_id = ${loop.b.accountId}`);
    assert.equal(n!.n, 0, 'the AI of B was not asked');
  });

  it('a hostile forwarder (Auto-Submitted, List-* and Precedence stripped; From a constant outside address): at most EMAIL_ANSWERS_PER_SENDER_PER_HOUR mails to each mailbox', {
    timeout: 60_000,
  }, async (t) => {
    const r = randomUUID().slice(0, 8);
    const [x, y] = [`ada-${r}@example.org`, `sam.rivera-${r}@example.net`];
    const loop = await mailLoop(x, y, { strip: AUTOMATIC, thread: true });
    t.diagnostic(said(loop));
    for (const m of loop.atB) assert.doesNotMatch(Buffer.from(m.raw).toString('utf8'), /^(?:auto-submitted|precedence|list-[a-z-]+):/im);
    assert.ok(loop.toY.length >= 1, 'B took the stripped mail for a customer and mailed back: the loop ran');
    assert.ok(loop.toX.length <= ANSWERS_PER_HOUR, `A mailed ${loop.toX.length}`);
    assert.ok(loop.toY.length <= ANSWERS_PER_HOUR, `B mailed ${loop.toY.length}`);
  });

  it('a hostile forwarder that also drops the thread (each mail a new conversation): the per-sender cap ends it at EMAIL_ANSWERS_PER_SENDER_PER_HOUR mails each way', {
    timeout: 60_000,
  }, async (t) => {
    const r = randomUUID().slice(0, 8);
    const [x, y] = [`bea-${r}@example.org`, `tom.hale-${r}@example.net`];
    const loop = await mailLoop(x, y, { strip: AUTOMATIC, thread: false });
    t.diagnostic(said(loop));
    assert.equal(new Set(loop.atA.map((m) => m.conversation_id)).size, loop.atA.length, 'a new conversation each');
    assert.equal(loop.toX.length, ANSWERS_PER_HOUR);
    assert.equal(loop.toY.length, ANSWERS_PER_HOUR);
    // The mail that would have gone on was received, processed and not mailed.
    assert.equal(loop.atA.length, ANSWERS_PER_HOUR + 1);
    assert.equal(loop.atB.length, ANSWERS_PER_HOUR);
  });
});
