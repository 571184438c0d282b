/**
 * Data lifecycle (docs/contracts.md §18): retention deletes only an account's expired conversations
 * with every row about them (upload bytes included), one `conversation.deleted` webhook each, past
 * insights unchanged; concurrent rounds never delete twice; a failed batch leaves every conversation
 * whole; erasing a visitor by email or id leaves nothing reachable through any door; the export's
 * shape; roles on the page, the actions and the download.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows, type Db } from '../../db/client';
import { refreshDirtyInsights } from '../../db/queries/insights';
import { CLI } from '../../lib/audit/contract';
import { listAudit } from '../../lib/audit/service';
import { createAdminUser } from '../../lib/accounts/service';
import { history } from '../../lib/visitor/service';
import { runRetentionRound, saveRetention, setRetention } from '../../lib/privacy/retention';
import { eraseVisitor, eraseVisitorAs, exportVisitor, findVisitor } from '../../lib/privacy/visitor';
import { createWebhookEndpoint } from '../../lib/webhooks/service';
import { CONVERSATION_KEYS, V2 } from '../helpers/api-fixtures';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type TestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { eventually } from '../helpers/widget';
import { signIn } from '../helpers/signin';
import { connectMember } from '../helpers/inbox';

let server: TestServer;
let db: Db;

before(async () => {
  server = await startTestServer({ RETENTION_INTERVAL_SECONDS: '3600', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' });
  db = await getDb();
});
after(() => server?.close());

const daysAgo = (n: number, time = '10:00:00') => `${new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10)} ${time}`;
const dayOf = (n: number) => daysAgo(n).slice(0, 10);
const recent = () => new Date(Date.now() - 60_000).toISOString().replace('T', ' ').slice(0, 19);

type Conv = { id: string; responses: string[] };

/**
 * Conversations of the account with two responses each, created and last changed `age` days ago
 * (0: a minute ago), and a row of every kind about them: feedback, a comment, a stored message, an
 * event, an upload with its bytes, a pending mail, a received mail.
 */
async function conversations(acct: TestAccount, n: number, age: number, extra: { visitorId?: string; email?: string; title?: string } = {}): Promise<Conv[]> {
  const [ch] = await newChannelIds(1);
  const lines: object[] = [];
  const out: Conv[] = [];
  for (let i = 0; i < n; i++) {
    const at = age === 0 ? recent() : daysAgo(age);
    const c = conversationLine({ channel_id: ch!, created_at: at, updated_at: at, title: extra.title ?? 'A conversation', status: 'Resolved' });
    const r1 = responseLine(c, { created_at: at, likes: 1 });
    const r2 = responseLine(c, { created_at: at, question: 'Where is my parcel?', answer: 'On its way.' });
    lines.push(c, r1, r2);
    out.push({ id: c.conversation_id, responses: [r1.response_id, r2.response_id] });
  }
  await importLines(acct.accountId, lines);
  const ids = `{${out.map((c) => c.id).join(',')}}`;
  const responses = `{${out.flatMap((c) => c.responses).join(',')}}`;
  const a = acct.accountId;
  await db.execute(
    sql`UPDATE conversations SET visitor_id = ${extra.visitorId ?? null}, visitor_email = ${extra.email ?? null} WHERE id = ANY(${ids}::uuid[])`,
  );
  await db.execute(sql`INSERT INTO response_feedback (response_id, visitor_id, value) SELECT r, 'v', 1 FROM unnest(${responses}::uuid[]) r`);
  await db.execute(
    sql`INSERT INTO response_comments (account_id, response_id, visitor_id, body) SELECT ${a}, r, 'v', 'Thanks!' FROM unnest(${responses}::uuid[]) r`,
  );
  await db.execute(
    sql`INSERT INTO conversation_messages (account_id, conversation_id, author, text) SELECT ${a}, c, 'agent', 'Hello from Dana' FROM unnest(${ids}::uuid[]) c`,
  );
  await db.execute(
    sql`INSERT INTO conversation_events (conversation_id, seq, kind, payload) SELECT c, 1, 'message', '{}'::jsonb FROM unnest(${ids}::uuid[]) c`,
  );
  await db.execute(sql`
    WITH up AS (
      INSERT INTO attachments (account_id, conversation_id, filename, content_type, size)
      SELECT ${a}, c, 'receipt.txt', 'text/plain', 5 FROM unnest(${ids}::uuid[]) c RETURNING id
    )
    INSERT INTO upload_chunks (upload_id, seq, data) SELECT id, 0, '\\x68656c6c6f'::bytea FROM up`);
  await db.execute(
    sql`INSERT INTO mails (account_id, "to", subject, text, html, conversation_id) SELECT ${a}, 'visitor@example.test', 'Re: parcel', 'text', '<p>text</p>', c FROM unnest(${ids}::uuid[]) c`,
  );
  await db.execute(sql`
    INSERT INTO inbound_mails (account_id, envelope_from, recipient, raw, size, status, conversation_id)
    SELECT ${a}, 'visitor@example.test', 'in@example.test', '\\x6869'::bytea, 2, 'done', c FROM unnest(${ids}::uuid[]) c`);
  return out;
}

/** How many rows of each kind there are about these conversations. */
async function rowsAbout(convs: Conv[]): Promise<Record<string, number>> {
  const ids = `{${convs.map((c) => c.id).join(',')}}`;
  const responses = `{${convs.flatMap((c) => c.responses).join(',')}}`;
  const [row] = await rows<Record<string, number>>(
    db,
    sql`SELECT
      (SELECT count(*)::int FROM conversations WHERE id = ANY(${ids}::uuid[])) AS conversations,
      (SELECT count(*)::int FROM responses WHERE id = ANY(${responses}::uuid[])) AS responses,
      (SELECT count(*)::int FROM response_feedback WHERE response_id = ANY(${responses}::uuid[])) AS feedback,
      (SELECT count(*)::int FROM response_comments WHERE response_id = ANY(${responses}::uuid[])) AS comments,
      (SELECT count(*)::int FROM conversation_messages WHERE conversation_id = ANY(${ids}::uuid[])) AS messages,
      (SELECT count(*)::int FROM conversation_events WHERE conversation_id = ANY(${ids}::uuid[])) AS events,
      (SELECT count(*)::int FROM attachments WHERE conversation_id = ANY(${ids}::uuid[])) AS uploads,
      (SELECT count(*)::int FROM upload_chunks u JOIN attachments t ON t.id = u.upload_id WHERE t.conversation_id = ANY(${ids}::uuid[])) AS upload_bytes,
      (SELECT count(*)::int FROM mails WHERE conversation_id = ANY(${ids}::uuid[])) AS mails,
      (SELECT count(*)::int FROM inbound_mails WHERE conversation_id = ANY(${ids}::uuid[])) AS inbound_mails,
      (SELECT count(*)::int FROM webhook_events WHERE conversation_id = ANY(${ids}::uuid[]) AND type <> 'conversation.deleted') AS webhook_events`,
  );
  return row!;
}

const whole = (n: number) => ({
  conversations: n,
  responses: 2 * n,
  feedback: 2 * n,
  comments: 2 * n,
  messages: n,
  events: n,
  uploads: n,
  upload_bytes: n,
  mails: n,
  inbound_mails: n,
  webhook_events: 0,
});
const gone = whole(0);

async function deletedWebhooks(accountId: number): Promise<Array<{ conversation_id: string; reason: string }>> {
  const found = await rows<{ body: string }>(db, sql`SELECT body FROM webhook_events WHERE account_id = ${accountId} AND type = 'conversation.deleted'`);
  return found.map((r) => {
    const body = JSON.parse(r.body) as { type: string; data: { conversation_id: string; reason: string } };
    assert.equal(body.type, 'conversation.deleted');
    assert.deepEqual(Object.keys(body.data), ['conversation_id', 'reason']);
    return body.data;
  });
}

describe('retention', () => {
  it('deletes only the expired conversations of that account, with every row about them, one webhook each; past insights stay as they were', async () => {
    const a = await createTestAccount('Retention A');
    const b = await createTestAccount('Retention B');
    await createWebhookEndpoint(CLI, { accountId: a.accountId, url: 'http://127.0.0.1:9/hook', events: ['conversation.deleted'] });
    const old = await conversations(a, 6, 40);
    const fresh = await conversations(a, 2, 0);
    const otherAccount = await conversations(b, 3, 40);
    const get = api(server.url, a.key);
    const window = `from=${dayOf(45)}&to=${dayOf(1)}`;
    const before = await get(`${V2}/insights?${window}`);
    assert.equal(before.status, 200);
    assert.equal(before.body.conversations, 6, 'the day is counted before');
    assert.equal((await get(`${V2}/conversation`)).body.count, 8);

    assert.deepEqual(await setRetention(CLI, a.accountId, { days: 30 }), { days: 30 });
    // The setting wakes the job at once (RETENTION_INTERVAL_SECONDS is an hour here).
    await eventually(
      () => rowsAbout(old),
      (r) => r.conversations === 0,
      'expired conversations deleted',
      20_000,
    );
    assert.deepEqual(await rowsAbout(old), gone);
    assert.deepEqual(await rowsAbout(fresh), whole(2), 'conversations within the retention stay');
    assert.deepEqual(await rowsAbout(otherAccount), whole(3), 'another account is untouched');
    const hooks = await deletedWebhooks(a.accountId);
    assert.deepEqual(hooks.map((h) => h.conversation_id).sort(), old.map((c) => c.id).sort(), 'one webhook per conversation');
    assert.ok(hooks.every((h) => h.reason === 'retention'));
    const [pending] = await rows<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.account_id = ${a.accountId} AND e.type = 'conversation.deleted'`,
    );
    assert.equal(pending!.n, 6, 'queued for the subscribed endpoint');

    const list = await get(`${V2}/conversation`);
    assert.equal(list.body.count, 2, 'the counters follow');
    assert.equal(list.body.results.length, 2);
    const after = await get(`${V2}/insights?${window}`);
    assert.deepEqual(after.body, before.body, 'past figures unchanged');
    // A later write that marks the day dirty, and the background refresh, recompute nothing of a kept day.
    await db.execute(sql`INSERT INTO insights_dirty_days (account_id, day, xid) VALUES (${a.accountId}, ${dayOf(40)}::date, 1) ON CONFLICT DO NOTHING`);
    await refreshDirtyInsights(db, 100);
    assert.deepEqual((await get(`${V2}/insights?${window}`)).body, before.body, 'still unchanged after a refresh');

    assert.deepEqual(await setRetention(CLI, a.accountId, { days: null }), { days: null });
  });

  it("rounds running at once (this test and the server's job) never delete a conversation twice", async () => {
    const c = await createTestAccount('Retention C');
    await createWebhookEndpoint(CLI, { accountId: c.accountId, url: 'http://127.0.0.1:9/hook', events: ['conversation.deleted'] });
    const old = await conversations(c, 300, 20);
    await setRetention(CLI, c.accountId, { days: 10 });
    const loop = async () => {
      for (let i = 0; i < 50 && (await runRetentionRound(40)).more; i++);
    };
    await Promise.all([loop(), loop(), loop()]);
    await eventually(
      () => rowsAbout(old),
      (r) => r.conversations === 0,
      'expired conversations deleted',
      20_000,
    );
    assert.deepEqual(await rowsAbout(old), gone);
    const hooks = await deletedWebhooks(c.accountId);
    assert.equal(hooks.length, 300, 'webhooks = conversations');
    assert.equal(new Set(hooks.map((h) => h.conversation_id)).size, 300);
    await setRetention(CLI, c.accountId, { days: null });
  });

  it('a batch that fails leaves every conversation whole (one transaction per batch)', async () => {
    const d = await createTestAccount('Atomic D');
    const convs = await conversations(d, 5, 3, { visitorId: 'atomic-visitor' });
    await assert.rejects(
      eraseVisitor(CLI, d.accountId, { visitorId: 'atomic-visitor' }, async (tx) => {
        // A real constraint violation after the batch's deletes, inside its transaction.
        await tx.execute(sql`INSERT INTO accounts (id, name) VALUES (${d.accountId}, 'duplicate')`);
      }),
      /Failed query: INSERT INTO accounts/,
    );
    assert.deepEqual(await rowsAbout(convs), whole(5), 'every conversation whole');
    assert.deepEqual(await deletedWebhooks(d.accountId), []);
    assert.deepEqual(await eraseVisitor(CLI, d.accountId, { visitorId: 'atomic-visitor' }), { conversations: 5, responses: 10, uploads: 5 });
    assert.deepEqual(await rowsAbout(convs), gone);
  });

  it('the setting: 1–3650 days or null; anything else is refused with its reason', async () => {
    const e = await createTestAccount('Setting E');
    for (const days of [0, 3651, 1.5, '30', -1]) {
      await assert.rejects(setRetention(CLI, e.accountId, { days }), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'invalid_request');
        assert.match(err.message, /days/);
        return true;
      });
    }
    await assert.rejects(setRetention(CLI, 999_999_999, { days: 3 }), /No account with id 999999999/);
    assert.deepEqual(await setRetention(CLI, e.accountId, { days: 3650 }), { days: 3650 });
    assert.deepEqual(await setRetention(CLI, e.accountId, { days: null }), { days: null });
  });
});

describe('erasing and exporting a visitor', () => {
  it('by email: that address and every conversation of a visitor who gave it; afterwards no door finds anything', async () => {
    const acct = await createTestAccount('Erase Co');
    const get = api(server.url, acct.key);
    const email = `Erin-${randomUUID().slice(0, 8)}@Example.test`;
    const word = `zebra${randomUUID().slice(0, 6)}`;
    const gaveEmail = await conversations(acct, 2, 2, { visitorId: 'v-erin', email, title: `Parcel ${word}` });
    const sameVisitor = await conversations(acct, 2, 2, { visitorId: 'v-erin', title: `Refund ${word}` });
    const otherDevice = await conversations(acct, 1, 2, { visitorId: 'v-erin-phone', email: email.toLowerCase(), title: `Phone ${word}` });
    const otherDeviceToo = await conversations(acct, 1, 2, { visitorId: 'v-erin-phone', title: `Phone two ${word}` });
    const someoneElse = await conversations(acct, 2, 2, { visitorId: 'v-other', email: 'other@example.test', title: `Other ${word}` });
    const erin = [...gaveEmail, ...sameVisitor, ...otherDevice, ...otherDeviceToo];
    assert.deepEqual(await findVisitor(acct.accountId, { email }), { conversations: 6 });

    assert.deepEqual(await eraseVisitor(CLI, acct.accountId, { email: email.toUpperCase() }), { conversations: 6, responses: 12, uploads: 6 });
    assert.deepEqual(await rowsAbout(erin), gone);
    assert.deepEqual(await rowsAbout(someoneElse), whole(2));
    assert.equal((await deletedWebhooks(acct.accountId)).filter((h) => h.reason === 'erasure').length, 0, 'no endpoint subscribed: none queued');

    for (const c of erin) {
      assert.equal((await get(`${V2}/conversation/${c.id}`)).status, 404, 'by id');
      for (const r of c.responses) assert.equal((await get(`${V2}/response/${r}`)).status, 404, 'a response by id');
      await assert.rejects(
        history({ accountId: acct.accountId, visitorId: 'v-erin', clientId: null, channelId: 0 }, () => {}, { conversation_id: c.id }),
        (e: Error & { code?: string }) => e.code === 'not_found',
      );
    }
    const listed = await get(`${V2}/conversation?query=${word}`);
    assert.deepEqual(listed.body.results.map((r: { id: string }) => r.id).sort(), someoneElse.map((c) => c.id).sort(), 'search finds only the others');
    assert.equal((await get(`${V2}/conversation`)).body.count, 2, 'lists');
    const exported = await fetch(`${server.url}${V2}/conversation/export`, { headers: { authorization: `Bearer ${acct.key}` } }).then((r) => r.text());
    for (const c of erin) assert.ok(!exported.includes(c.id), 'the export');
    const [outbox] = await rows<{ n: number }>(
      db,
      sql`SELECT count(*)::int AS n FROM mails WHERE account_id = ${acct.accountId} AND conversation_id IS NOT NULL`,
    );
    assert.equal(outbox!.n, 2, "only the others' mail stays in the outbox");
    assert.deepEqual(await findVisitor(acct.accountId, { email }), { conversations: 0 });
    await assert.rejects(eraseVisitor(CLI, acct.accountId, { email }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'not_found');
      assert.equal(e.message, `No conversations found for email ${email}.`);
      return true;
    });
  });

  it('by visitor id: 100 conversations within 10 s, one webhook each with reason erasure', async () => {
    const acct = await createTestAccount('Erase Many');
    await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: 'http://127.0.0.1:9/hook', events: ['conversation.deleted'] });
    const many = await conversations(acct, 100, 1, { visitorId: 'v-many' });
    const kept = await conversations(acct, 1, 1, { visitorId: 'v-kept' });
    const t0 = performance.now();
    assert.deepEqual(await eraseVisitor(CLI, acct.accountId, { visitorId: 'v-many' }), { conversations: 100, responses: 200, uploads: 100 });
    const ms = performance.now() - t0;
    assert.ok(ms < 10_000, `erased in ${Math.round(ms)} ms`);
    assert.deepEqual(await rowsAbout(many), gone);
    assert.deepEqual(await rowsAbout(kept), whole(1));
    const hooks = await deletedWebhooks(acct.accountId);
    assert.equal(hooks.length, 100);
    assert.ok(hooks.every((h) => h.reason === 'erasure'));
    await assert.rejects(eraseVisitor(CLI, acct.accountId, { visitorId: 'nobody' }), /No conversations found for visitor id nobody\./);
  });

  it('members with the inbox open are told of each erased conversation (their pages re-read and find it gone)', async () => {
    const acct = await createTestAccount('Erase Live');
    const erased = await conversations(acct, 2, 1, { visitorId: 'v-live' });
    const member = await connectMember(server.url, (await signIn(server.url, acct.email, acct.password)).cookie!);
    try {
      await eraseVisitor(CLI, acct.accountId, { visitorId: 'v-live' });
      await member.until(() => erased.every((c) => member.of('inbox:changed', c.id).length === 1), 'inbox:changed for both erased conversations');
    } finally {
      member.close();
    }
  });

  it('the export: the visitor, then each conversation as the Customer API shapes it with ratings, comments and uploads', async () => {
    const acct = await createTestAccount('Export Co');
    const convs = await conversations(acct, 2, 2, { visitorId: 'v-exp', email: 'exp@example.test' });
    await db.execute(sql`UPDATE conversations SET csat = 5, csat_comment = 'Lovely' WHERE id = ${convs[0]!.id}::uuid`);
    const doc = (await exportVisitor(CLI, acct.accountId, { visitorId: 'v-exp' })) as { visitor: object; conversations: Array<Record<string, unknown>> };
    assert.deepEqual(Object.keys(doc), ['visitor', 'conversations']);
    assert.deepEqual(doc.visitor, { email: 'exp@example.test', visitor_ids: ['v-exp'] });
    assert.equal(doc.conversations.length, 2);
    const get = api(server.url, acct.key);
    for (const c of doc.conversations) {
      assert.deepEqual(Object.keys(c).sort(), [...CONVERSATION_KEYS, 'messages', 'ratings', 'comments', 'uploads'].sort());
      const detail = await get(`${V2}/conversation/${c.id}`);
      const { messages, ...record } = detail.body;
      assert.deepEqual(c.messages, messages, 'messages as GET /conversation/{id} gives them');
      for (const [k, v] of Object.entries(record)) assert.deepEqual(c[k], v, k);
      assert.deepEqual(c.uploads, [
        { filename: 'receipt.txt', content_type: 'text/plain', size: 5, created_at: (c.uploads as Array<{ created_at: string }>)[0]!.created_at },
      ]);
      assert.equal((c.comments as unknown[]).length, 2);
      assert.deepEqual(Object.keys((c.comments as object[])[0]!), ['response_id', 'body', 'created_at']);
      const ratings = c.ratings as Array<{ kind: string; value: unknown }>;
      assert.deepEqual(
        ratings.filter((r) => r.kind === 'answer').map((r) => r.value),
        ['like', 'like'],
      );
      if (c.id === convs[0]!.id) assert.deepEqual(ratings.at(-1), { kind: 'conversation', value: 5, comment: 'Lovely' });
    }
    await assert.rejects(exportVisitor(CLI, acct.accountId, { email: 'nobody@example.test' }), /No conversations found for email nobody@example.test\./);
    await assert.rejects(exportVisitor(CLI, acct.accountId, { email: 'not an email' }), /email: must be an email address/);
  });
});

describe('the audit log', () => {
  it('records a changed retention, each erasure batch and each export, in their transactions; an email is masked', async () => {
    const acct = await createTestAccount('Audit Privacy');
    await conversations(acct, 2, 1, { visitorId: 'v-audit', email: 'audrey@example.test' });
    await setRetention(CLI, acct.accountId, { days: 30 });
    await setRetention(CLI, acct.accountId, { days: 30 });
    await exportVisitor(CLI, acct.accountId, { email: 'audrey@example.test' });
    await eraseVisitor(CLI, acct.accountId, { email: 'audrey@example.test' });
    await assert.rejects(eraseVisitor(CLI, acct.accountId, { email: 'audrey@example.test' }), /No conversations found/);
    await setRetention(CLI, acct.accountId, { days: null });
    const { entries } = await listAudit({ accountId: acct.accountId, limit: 10 });
    assert.deepEqual(
      entries
        .filter((e) => e.action !== 'api_key.created')
        .map((e) => [e.actor, e.action, e.target])
        .reverse(),
      [
        ['cli', 'retention.changed', 'days off → 30'],
        ['cli', 'visitor.exported', 'email a…@example.test: 2 conversations'],
        ['cli', 'visitor.erased', 'email a…@example.test: 2 conversations'],
        ['cli', 'retention.changed', 'days 30 → off'],
      ],
      'an unchanged save and a refused erasure record nothing',
    );
  });
});

describe('roles: /privacy, its actions and the download', () => {
  it('owner and admins open the page and download; an agent gets the 404 page, 403 on the actions and the download', async () => {
    const acct = await createTestAccount('Roles Co');
    await conversations(acct, 1, 1, { visitorId: 'v-role', email: 'role@example.test' });
    const agentEmail = `agent-${randomUUID()}@example.test`;
    const agent = await createAdminUser(CLI, { accountId: acct.accountId, email: agentEmail, password: 'agent password 1', role: 'agent' });
    const owner = (await signIn(server.url, acct.email, acct.password)).cookie!;
    const agentCookie = (await signIn(server.url, agentEmail, 'agent password 1')).cookie!;
    const page = async (path: string, cookie: string) => {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: 'manual' });
      return { status: res.status, text: await res.text(), headers: res.headers };
    };
    const shown = await page('/privacy', owner);
    assert.equal(shown.status, 200);
    for (const label of [
      'Delete conversations automatically',
      'Days after the last message',
      'Save retention',
      'Visitor email or id',
      'Find',
      'Export',
      'Erase',
      'Type the account name to confirm',
      'Delete account',
    ])
      assert.ok(shown.text.includes(label), label);
    const refused = await page('/privacy', agentCookie);
    assert.equal(refused.status, 404);
    assert.ok(refused.text.includes('Not found') && !refused.text.includes('Save retention'));

    const file = await page(`/privacy/export?visitor=${encodeURIComponent('role@example.test')}`, owner);
    assert.equal(file.status, 200);
    assert.match(file.headers.get('content-disposition') ?? '', /^attachment; filename="visitor-export-\d+\.json"$/);
    assert.equal((JSON.parse(file.text) as { conversations: unknown[] }).conversations.length, 1);
    const [exported] = (await listAudit({ accountId: acct.accountId, limit: 1 })).entries;
    assert.deepEqual(
      { actor: exported!.actor, action: exported!.action, target: exported!.target, ip: typeof exported!.ip },
      { actor: acct.email, action: 'visitor.exported', target: 'email r…@example.test: 1 conversations', ip: 'string' },
      "the download is in the audit log: the owner, from the request's address",
    );
    const none = await page('/privacy/export?visitor=ghost', owner);
    assert.equal(none.status, 404);
    assert.equal(JSON.parse(none.text).detail, 'No conversations found for visitor id ghost.');
    assert.equal((await page('/privacy/export?visitor=role@example.test', agentCookie)).status, 403);

    const asAgent = { accountId: acct.accountId, role: 'agent' as const, userId: agent.user_id, by: CLI };
    for (const action of [() => saveRetention(asAgent, { days: 30 }), () => eraseVisitorAs(asAgent, 'role@example.test')])
      await assert.rejects(action(), (e: Error & { code?: string }) => e.code === 'forbidden');
    assert.deepEqual(await findVisitor(acct.accountId, { email: 'role@example.test' }), { conversations: 1 }, 'nothing erased');
  });
});
