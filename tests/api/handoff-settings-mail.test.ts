/**
 * Handoff settings and mail (docs/contracts.md §14 "office hours" and "notifications",
 * docs/decisions/handoff-mail.md) on the real server with the real SMTP server process: the /bot
 * form's validation as a table, availability in and outside office hours in a non-UTC zone, the
 * waiting mail sent once per waiting episode to the members who want it, a member's unseen reply
 * mailed to the visitor once (and not when seen), and concurrent passes never writing a mail twice.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { createAdminUser } from '../../lib/accounts/service';
import type { Role } from '../../lib/auth/roles';
import { availabilityOf, saveHandoffSettings, touchDashboard } from '../../lib/conversations/availability';
import { conversationSummary, inboxCounts, listInboxConversations } from '../../lib/conversations/inbox-views';
import { handBack, markMessagesSeen, replyAsMember, requestHandoff, setVisitorEmail, takeOver } from '../../lib/conversations/handoff';
import type { Member } from '../../lib/conversations/handoff-contract';
import { DEFAULT_HANDOFF_SETTINGS } from '../../lib/conversations/handoff-contract';
import { getHandoffFormValues, saveHandoffForm, type HandoffFormValues } from '../../lib/dashboard/handoff-settings';
import { listAccountsWithWaitingMail } from '../../db/queries/handoff-mail';
import { mailUnseenReplies, mailWaitingConversations } from '../../lib/mail/handoff-notifier';
import { setMyEmailNotifications } from '../../lib/team/profile';
import { seedDemoAccount } from '../../lib/demo/seed';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { startInstances } from '../helpers/instances';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import { startSmtpServer, type ReceivedMail, type SmtpServer } from '../helpers/smtp';

const AFTER_SECONDS = 1;
/** Two replies sent one after the other must fall in one window even when the machine is busy. */
const REPLY_AFTER_SECONDS = 3;
/** A member's waiting mails are at least this far apart (a test moves a member's last mail back to end it). */
const WINDOW_SECONDS = 600;
let server: TestServer;
let smtp: SmtpServer;
const received: ReceivedMail[] = [];
before(
  async () => {
    smtp = await startSmtpServer(0, received);
    server = await startTestServer({
      SMTP_URL: smtp.url,
      MAIL_FROM: 'svc <team@example.test>',
      MAIL_RETRY_BASE_MS: '300',
      HANDOFF_EMAIL_AFTER_SECONDS: String(AFTER_SECONDS),
      HANDOFF_REPLY_EMAIL_AFTER_SECONDS: String(REPLY_AFTER_SECONDS),
      HANDOFF_EMAIL_MEMBER_WINDOW_SECONDS: String(WINDOW_SECONDS),
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

type M = Member & { email: string; password: string };
type Team = { accountId: number; owner: M; admin: M; agent: M; channel: number };

async function team(name: string): Promise<Team> {
  const a = await createTestAccount(name);
  const [owner] = await rows<{ id: number }>(await getDb(), sql`SELECT id FROM admin_users WHERE account_id = ${a.accountId} AND role = 'owner'`);
  const member = async (n: string, role: Role): Promise<M> => {
    const email = `${n.toLowerCase()}-${randomUUID()}@example.test`;
    const password = 'member password 1';
    const u = await createAdminUser(CLI, { accountId: a.accountId, email, password, role, name: n });
    return { accountId: a.accountId, userId: u.user_id, role, email, password };
  };
  const [channel] = await newChannelIds(1);
  return {
    accountId: a.accountId,
    owner: { accountId: a.accountId, userId: owner!.id, role: 'owner', email: a.email, password: a.password },
    admin: await member('Ada', 'admin'),
    agent: await member('Ann', 'agent'),
    channel: channel!,
  };
}

async function conversation(t: Team, question: string): Promise<{ id: string; title: string }> {
  const title = `Parcel ${randomUUID().slice(0, 8)}`;
  const c = conversationLine({ channel_id: t.channel, status: 'Open', title });
  await importLines(t.accountId, [c, responseLine(c, { question, answer: 'I could not find that.' })]);
  return { id: c.conversation_id, title };
}

/** Moves the member's last waiting mail back past the window (instead of waiting WINDOW_SECONDS). */
async function endMailWindow(userId: number) {
  await rows(await getDb(), sql`UPDATE admin_users SET waiting_mail_at = now() - interval '1 day' WHERE id = ${userId} RETURNING id`);
}

const visitor = (t: Team, id: string) => ({ accountId: t.accountId, conversationId: id });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mailsTo = (to: string, subject?: string) => received.filter((m) => m.envelopeTo.includes(to) && (!subject || m.subject.includes(subject)));

const formValues = (over: Partial<HandoffFormValues> = {}): HandoffFormValues => ({
  enabled: true,
  timeZone: 'Europe/Berlin',
  days: DEFAULT_HANDOFF_SETTINGS.hours.map(() => ({ open: true, opens: '09:00', closes: '17:00' })),
  awayText: 'We are back soon.',
  ...over,
});
const dayPatch = (i: number, d: Partial<HandoffFormValues['days'][number]>) => formValues().days.map((x, j) => (j === i ? { ...x, ...d } : x));

describe('the /bot "Handoff" settings', () => {
  it('saves and reads back (closing 00:00 is midnight, stored 24:00); refuses bad input naming the form field', async () => {
    const t = await team('Settings Co');
    assert.deepEqual((await getHandoffFormValues(t.accountId)).days[0], { open: true, opens: '00:00', closes: '00:00' }, 'the default: all day');
    const saved = await saveHandoffForm(CLI, t.owner, formValues({ days: dayPatch(6, { open: false, opens: '10:00', closes: '00:00' }) }));
    assert.equal(saved.timeZone, 'Europe/Berlin');
    assert.deepEqual(saved.days[6], { open: false, opens: '10:00', closes: '00:00' });
    const [stored] = await rows<{ hours: unknown }>(await getDb(), sql`SELECT hours FROM handoff_settings WHERE account_id = ${t.accountId}`);
    const hours = (typeof stored!.hours === 'string' ? JSON.parse(stored!.hours) : stored!.hours) as Array<{ closes: string }>;
    assert.equal(hours[6]!.closes, '24:00');

    const cases: Array<[string, HandoffFormValues, RegExp]> = [
      ['unknown zone', formValues({ timeZone: 'Mars/Olympus' }), /^Time zone: must be an IANA time zone/],
      ['empty zone', formValues({ timeZone: '  ' }), /^Time zone: is required/],
      ['closes before it opens', formValues({ days: dayPatch(2, { opens: '18:00', closes: '09:00' }) }), /^Wednesday closes: must close after it opens/],
      ['empty opening time', formValues({ days: dayPatch(0, { opens: '' }) }), /^Monday opens: must be a time HH:MM/],
      ['a time out of range', formValues({ days: dayPatch(4, { closes: '25:00' }) }), /^Friday closes: must be a time HH:MM/],
      ['away text too long', formValues({ awayText: 'x'.repeat(501) }), /^Away text: must be at most 500 characters/],
    ];
    for (const [name, input, message] of cases) {
      await assert.rejects(saveHandoffForm(CLI, t.owner, input), (e: { code: string; message: string }) => {
        assert.equal(e.code, 'invalid_request', name);
        assert.match(e.message, message, name);
        return true;
      });
    }
    // A closed day's times still have to be times, but need not be in order.
    await saveHandoffForm(CLI, t.owner, formValues({ days: dayPatch(5, { open: false, opens: '18:00', closes: '09:00' }) }));
    await assert.rejects(saveHandoffForm(CLI, t.agent, formValues()), { code: 'forbidden' });
    await assert.rejects(saveHandoffForm(CLI, t.admin, formValues({ timeZone: 'Nowhere' })), { code: 'invalid_request' });
    await saveHandoffForm(CLI, t.admin, formValues());
  });

  it('the page: owners and admins see the section; agents get a 404; /profile offers the mail setting', async () => {
    const t = await team('Page Co');
    const owner = await signIn(server.url, t.owner.email, t.owner.password);
    const bot = await fetch(`${server.url}/bot`, { headers: { cookie: owner.cookie! } });
    assert.equal(bot.status, 200);
    const html = await bot.text();
    for (const label of ['Handoff', 'Visitors can ask for a person', 'Time zone', 'Sunday closes', 'Away text', 'Save handoff settings'])
      assert.ok(html.includes(label), label);
    const agent = await signIn(server.url, t.agent.email, t.agent.password);
    assert.equal((await fetch(`${server.url}/bot`, { headers: { cookie: agent.cookie! } })).status, 404);
    const profile = await fetch(`${server.url}/profile`, { headers: { cookie: agent.cookie! } });
    assert.match(await profile.text(), /Email me when a conversation waits/);
  });
});

describe('availability in a non-UTC time zone', () => {
  it('within office hours a person is promised; outside, the next opening in UTC', async () => {
    const t = await team('Hours Co');
    // New York (EST in December, UTC−5): Monday 09:00–17:00 only.
    const hours = DEFAULT_HANDOFF_SETTINGS.hours.map((_, i) =>
      i === 0 ? { open: true, opens: '09:00', closes: '17:00' } : { open: false, opens: '09:00', closes: '17:00' },
    );
    await saveHandoffSettings(CLI, t.owner, { enabled: true, time_zone: 'America/New_York', hours, away_text: 'Back on Monday.' });
    await touchDashboard(t.agent);
    const db = await getDb();
    const at = (iso: string) => availabilityOf(db, t.accountId, new Date(iso));
    const monday10 = await at('2026-12-07T15:00:00Z');
    assert.equal(monday10.available, true);
    assert.equal(monday10.until, null);
    const monday8 = await at('2026-12-07T13:00:00Z');
    assert.deepEqual([monday8.available, monday8.until, monday8.away_text], [false, '2026-12-07T14:00:00.000Z', 'Back on Monday.']);
    const monday17 = await at('2026-12-07T22:00:00Z');
    assert.deepEqual([monday17.available, monday17.until], [false, '2026-12-14T14:00:00.000Z']);
    // Sunday 23:30 in New York is already Monday in UTC: still closed.
    const sundayLate = await at('2026-12-07T04:30:00Z');
    assert.deepEqual([sundayLate.available, sundayLate.until], [false, '2026-12-07T14:00:00.000Z']);
    // Summer time (EDT, UTC−4): Monday 09:00 is 13:00 UTC.
    assert.equal((await at('2026-06-01T13:30:00Z')).available, true);
    assert.equal((await at('2026-06-01T12:30:00Z')).until, '2026-06-01T13:00:00.000Z');
  });
});

describe('the waiting mail', () => {
  it('after HANDOFF_EMAIL_AFTER_SECONDS, once per waiting episode, to the members who want it, with the summary and an absolute /inbox link', async () => {
    const t = await team('Waiting Co');
    await setMyEmailNotifications({ ...t.admin, sessionId: '' }, { notify_email: false });
    await assert.rejects(setMyEmailNotifications({ ...t.admin, sessionId: '' }, { notify_email: 'yes' }), { code: 'invalid_request' });
    const c = await conversation(t, 'Where is my parcel 4711?');
    await requestHandoff(visitor(t, c.id));
    const toOwner = await smtp.waitFor((m) => m.envelopeTo.includes(t.owner.email) && m.subject.includes(c.title));
    await smtp.waitFor((m) => m.envelopeTo.includes(t.agent.email) && m.subject.includes(c.title));
    assert.equal(toOwner.subject, `Waiting for a person: ${c.title}`);
    assert.match(toOwner.text, /Asked: Where is my parcel 4711\?/);
    assert.match(toOwner.text, new RegExp(`http://[^\\s]+/inbox/${c.id}`));
    assert.match(toOwner.html ?? '', new RegExp(`href="http://[^"]+/inbox/${c.id}"`));
    await sleep(AFTER_SECONDS * 2500);
    assert.equal(mailsTo(t.owner.email, c.title).length, 1, 'once');
    assert.equal(mailsTo(t.agent.email, c.title).length, 1, 'once');
    assert.equal(mailsTo(t.admin.email).length, 0, 'the admin turned it off');

    // A new waiting episode (handed back, asked again) is mailed again, once the owner's window has passed.
    await endMailWindow(t.owner.userId);
    await handBack(t.owner, { conversation_id: c.id });
    await requestHandoff(visitor(t, c.id));
    await smtp.waitFor((m) => m.envelopeTo.includes(t.owner.email) && m.subject.includes(c.title) && mailsTo(t.owner.email, c.title).length === 2);
  });

  it('a conversation taken over before the delay is not mailed', async () => {
    const t = await team('Quick Co');
    const c = await conversation(t, 'Can I change my address?');
    await requestHandoff(visitor(t, c.id));
    await takeOver(t.agent, { conversation_id: c.id });
    await sleep(AFTER_SECONDS * 2500);
    assert.equal(received.filter((m) => m.subject.includes(c.title)).length, 0);
  });

  it('concurrent passes (as on several instances) write each mail once', async () => {
    const t = await team('Busy Co');
    const cs = await Promise.all([1, 2, 3, 4, 5].map((i) => conversation(t, `Question ${i}`)));
    for (const c of cs) await requestHandoff(visitor(t, c.id));
    const db = await getDb();
    await rows(
      db,
      sql`UPDATE conversations SET waiting_since = now() - interval '1 hour' WHERE id = ANY(${sql.param(cs.map((c) => c.id))}::uuid[]) RETURNING id`,
    );
    const claimed = await Promise.all([mailWaitingConversations(), mailWaitingConversations(), mailWaitingConversations(), mailWaitingConversations()]);
    assert.ok(claimed.every((n) => n >= 0));
    const written = await rows<{ to: string; n: number }>(
      db,
      sql`SELECT "to", count(*)::int AS n FROM mails WHERE subject ILIKE '%waiting for a person%' AND "to" IN (${t.owner.email}, ${t.admin.email}, ${t.agent.email}) GROUP BY 1`,
    );
    assert.equal(written.length, 3, 'one mail to each member (all on by default), not one per conversation');
    assert.ok(
      written.every((w) => w.n === 1),
      JSON.stringify(written.filter((w) => w.n !== 1)),
    );
  });

  it('accounts with waiting mail are served the longest waiting first, so a burst of accounts never starves the oldest', async () => {
    const older = await team('Patient Co');
    const newer = await team('Hasty Co');
    const a = await conversation(older, 'Waited long');
    const b = await conversation(newer, 'Waited a bit');
    await requestHandoff(visitor(older, a.id));
    await requestHandoff(visitor(newer, b.id));
    const db = await getDb();
    await rows(db, sql`UPDATE conversations SET waiting_since = now() - interval '3 hours' WHERE id = ${a.id} RETURNING id`);
    await rows(db, sql`UPDATE conversations SET waiting_since = now() - interval '1 hour' WHERE id = ${b.id} RETURNING id`);
    const due = await listAccountsWithWaitingMail(db, AFTER_SECONDS, WINDOW_SECONDS, 1000);
    const [i, j] = [due.indexOf(older.accountId), due.indexOf(newer.accountId)];
    assert.ok(i >= 0 && j >= 0 && i < j, JSON.stringify({ due, older: older.accountId, newer: newer.accountId }));
    await mailWaitingConversations();
  });

  it('200 waiting conversations of one account: at most one mail per member per window; the next one lists what waited meanwhile', {
    timeout: 120_000,
  }, async () => {
    const t = await team('Flood Co');
    await setMyEmailNotifications({ ...t.admin, sessionId: '' }, { notify_email: false });
    await setMyEmailNotifications({ ...t.agent, sessionId: '' }, { notify_email: false });
    const lines = Array.from({ length: 200 }, (_, i) =>
      conversationLine({ channel_id: t.channel, status: 'Open', title: `Flood ${i} ${randomUUID().slice(0, 8)}` }),
    );
    await importLines(t.accountId, lines);
    const titles = new Set(lines.map((c) => c.title as string));
    for (const c of lines) await requestHandoff(visitor(t, c.conversation_id));
    const db = await getDb();
    const ids = sql.param(lines.map((c) => c.conversation_id));
    await rows(db, sql`UPDATE conversations SET waiting_since = now() - interval '1 hour' WHERE id = ANY(${ids}::uuid[]) RETURNING id`);
    await mailWaitingConversations();
    await mailWaitingConversations();
    const announced = async () =>
      (await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM conversations WHERE id = ANY(${ids}::uuid[]) AND waiting_mailed_at IS NOT NULL`))[0]!.n;
    assert.equal(await announced(), 200);
    const owners = async () => rows<{ subject: string; text: string }>(db, sql`SELECT subject, text FROM mails WHERE "to" = ${t.owner.email} ORDER BY id`);
    const first = await owners();
    assert.equal(first.length, 1, 'one mail within the window, not 200');
    // The window ends: the next pass mails what began waiting since the first mail, as a digest.
    await endMailWindow(t.owner.userId);
    await mailWaitingConversations();
    const all = await owners();
    assert.equal(all.length, 2);
    const digest = all[1]!;
    assert.equal(digest.subject, '200 conversations waiting for a person');
    const listed = [...titles].filter((x) => digest.text.includes(x));
    assert.equal(listed.length, 50, 'the digest names the 50 longest waiting');
    assert.match(digest.text, /and 150 more\./);
    assert.match(digest.text, /\/inbox\n/);
    const got = await smtp.waitFor((m) => m.envelopeTo.includes(t.owner.email) && m.subject === digest.subject);
    assert.match(got.html ?? '', /200 conversations of Flood Co/);
    assert.equal(mailsTo(t.admin.email).length + mailsTo(t.agent.email).length, 0, 'they turned it off');
  });
});

describe('the unseen reply mail', () => {
  it("a member's replies the visitor has not seen are mailed once, in one mail per conversation; seen replies are not", async () => {
    const t = await team('Reply Co');
    const c = await conversation(t, 'Do you ship to Norway?');
    const email = `visitor-${randomUUID()}@example.test`;
    await requestHandoff(visitor(t, c.id));
    await setVisitorEmail(visitor(t, c.id), { email });
    await replyAsMember(t.agent, { conversation_id: c.id, text: 'Yes, we do.' });
    await replyAsMember(t.agent, { conversation_id: c.id, text: 'Delivery takes 3 days.' });
    const mail = await smtp.waitFor((m) => m.envelopeTo.includes(email));
    assert.equal(mail.subject, 'Reply Co replied to your question');
    assert.match(mail.text, /Ann: Yes, we do\.\nAnn: Delivery takes 3 days\./);
    await sleep(REPLY_AFTER_SECONDS * 2500);
    assert.equal(mailsTo(email).length, 1, 'once, both replies in it');
    assert.equal(await mailUnseenReplies(0.1), 0, 'nothing left to mail');

    const seen = await conversation(t, 'And to Iceland?');
    const seenEmail = `seen-${randomUUID()}@example.test`;
    await requestHandoff(visitor(t, seen.id));
    await setVisitorEmail(visitor(t, seen.id), { email: seenEmail });
    await replyAsMember(t.agent, { conversation_id: seen.id, text: 'Yes.' });
    await markMessagesSeen(visitor(t, seen.id), {});
    await sleep(REPLY_AFTER_SECONDS * 2500);
    assert.equal(mailsTo(seenEmail).length, 0, 'the widget showed it');

    const noAddress = await conversation(t, 'Without an address');
    await requestHandoff(visitor(t, noAddress.id));
    await replyAsMember(t.agent, { conversation_id: noAddress.id, text: 'Hello?' });
    await sleep(REPLY_AFTER_SECONDS * 2500);
    const [m] = await rows<{ mailed: boolean }>(
      await getDb(),
      sql`SELECT mailed_at IS NOT NULL AS mailed FROM conversation_messages WHERE conversation_id = ${noAddress.id} AND author = 'agent'`,
    );
    assert.equal(m!.mailed, false, 'no address, no mail');
  });
});

describe('the demo', () => {
  it('shows every handoff feature: Waiting, handled by the agent (replies, a note), resolved and rated, declined answers', async () => {
    const demo = await seedDemoAccount();
    const db = await getDb();
    const [agent] = await rows<{ id: number }>(db, sql`SELECT id FROM admin_users WHERE email = ${demo.agent_email}`);
    const asAgent: Member = { accountId: demo.account_id, userId: agent!.id, role: 'agent' };
    const waiting = await listInboxConversations(asAgent, { view: 'waiting' });
    // Besides the widget visitor, the demo's customer who asked for a person by mail waits (lib/demo/email.ts).
    assert.deepEqual(
      waiting.conversations.map((c) => [c.id === demo.handoff.waiting ? 'widget' : c.id, c.email_from]).sort(),
      [
        ['widget', null],
        [waiting.conversations.find((c) => c.email_from)?.id, 'tom.becker@example.org'],
      ].sort(),
    );
    const counts = await inboxCounts(demo.account_id, agent!.id);
    assert.equal(counts.mine, 1, 'the agent handles one');
    assert.ok(counts.resolved >= 1);
    const state = await rows<{ id: string; status: string; handled_by: string; assignee_id: number | null; csat: number | null; csat_comment: string | null }>(
      db,
      sql`SELECT id, status, handled_by, assignee_id, csat, csat_comment FROM conversations WHERE id IN (${demo.handoff.handled}, ${demo.handoff.resolved}) ORDER BY status`,
    );
    assert.deepEqual(
      state.map((c) => [c.id, c.status, c.handled_by, c.assignee_id === agent!.id, c.csat, c.csat_comment]),
      [
        [demo.handoff.handled, 'Open', 'human', true, null, null],
        [demo.handoff.resolved, 'Resolved', 'human', false, 5, 'Quick and friendly, thanks!'],
      ],
    );
    const authors = await rows<{ author: string; n: number }>(
      db,
      sql`SELECT author, count(*)::int AS n FROM conversation_messages WHERE conversation_id = ${demo.handoff.handled} GROUP BY author ORDER BY author`,
    );
    assert.deepEqual(Object.fromEntries(authors.map((a) => [a.author, a.n])), { agent: 2, note: 1, system: 1, visitor: 1 });
    const summary = await conversationSummary(asAgent, { conversation_id: demo.handoff.waiting });
    assert.equal(summary.declined, 2, 'the AI declined both questions of the waiting visitor');
    const [declined] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM responses WHERE account_id = ${demo.account_id} AND declined`);
    assert.ok(declined!.n >= 3, `declined answers: ${declined!.n}`);
  });
});

describe('several instances', { skip: process.env.TEST_DB !== 'postgres' && 'needs PostgreSQL (instances share one database)' }, () => {
  it('two more server processes and this one mail each waiting conversation once to each member', { timeout: 240_000 }, async () => {
    const cluster = await startInstances(2, {
      DATABASE_URL: process.env.DATABASE_URL!,
      SMTP_URL: smtp.url,
      HANDOFF_EMAIL_AFTER_SECONDS: '0.5',
      HANDOFF_REPLY_EMAIL_AFTER_SECONDS: '0.5',
      HANDOFF_EMAIL_MEMBER_WINDOW_SECONDS: '1',
    });
    try {
      const t = await team('Cluster Co');
      const cs = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => conversation(t, `Cluster question ${i}`)));
      await Promise.all(cs.map((c) => requestHandoff(visitor(t, c.id))));
      const members = [t.owner.email, t.admin.email, t.agent.email];
      // One mail or a digest per member and window: each conversation is named in exactly one of a member's mails.
      const naming = (to: string, title: string) => received.filter((m) => m.envelopeTo.includes(to) && m.text.includes(title));
      for (const c of cs) for (const to of members) await smtp.waitFor((m) => m.envelopeTo.includes(to) && m.text.includes(c.title), 30_000);
      await sleep(2000);
      for (const c of cs) for (const to of members) assert.equal(naming(to, c.title).length, 1, `${to} about ${c.title}`);
    } finally {
      await cluster.close();
    }
  });
});
