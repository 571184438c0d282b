/**
 * svc's SMTP listener (docs/contracts.md §17) with a real SMTP client (nodemailer) against the real
 * server: recipients checked at RCPT (550, never a relay), the size (552), the per-sender rate
 * (451), STARTTLS, the `250` only once the raw message is stored, and processing from the store
 * exactly once (a duplicate Message-ID is one message; a lapsed lease is processed again).
 */
import { CLI, memberBy } from '../../lib/audit/contract';
import { listAudit } from '../../lib/audit/service';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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
import { inboundAddress, regenerateInboundAddress } from '../../lib/email/address';
import { processInboundMail } from '../../lib/email/processor';
import { getEmailSettings, saveEmailSettings } from '../../lib/email/settings';
import { isSvcTestMail } from '../../lib/email/svc-test';
import { NOT_LISTENING, sendTestEmail } from '../../lib/email/test-mail';
import { readMail } from '../../lib/documents/mail';
import { resolveConversation } from '../../lib/conversations/handoff';
import { listInboxConversations } from '../../lib/conversations/inbox-views';
import { listAccountMembers } from '../../lib/team/service';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { startSmtpServer, type SmtpServer } from '../helpers/smtp';
import { addKnowledge } from '../helpers/widget';
import { signIn } from '../helpers/signin';

const DOMAIN = 'mail.svc.test';
const MAX_BYTES = 64 * 1024;
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
    const page = await listInboxConversations({ accountId: acct.accountId, userId: owner!.user_id, role: 'owner' }, { view: 'all_open' });
    assert.equal(page.conversations.find((x) => x.id === m!.conversation_id)?.email_from, 'ada@example.org');
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
