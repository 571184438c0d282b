/**
 * The audit log (docs/contracts.md §18) through the real server and the database: one entry per
 * audited change with its actor, action, target and address, written in the change's own
 * transaction; append-only in the database; pruning; paging and filters; roles; tenancy.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows, type Db } from '../../db/client';
import { insertAuditEntry } from '../../db/queries/audit';
import { createAdminUser, createApiKey, revokeApiKey } from '../../lib/accounts/service';
import { saveModelEndpoint } from '../../lib/answers/model-endpoint';
import { AUDIT_ACTIONS, memberBy, type AuditBy } from '../../lib/audit/contract';
import { AUDIT_PAGE_SIZE, auditActors, auditPage, listAudit, pruneAuditBatch } from '../../lib/audit/service';
import { updateBotSettings } from '../../lib/bot/settings';
import { saveHandoffSettings } from '../../lib/conversations/availability';
import { DEFAULT_HANDOFF_SETTINGS } from '../../lib/conversations/handoff-contract';
import { saveEmailSettings } from '../../lib/email/settings';
import { changeMemberRole, inviteMember, removeMember, setRequireTwoFactor, type Actor } from '../../lib/team/service';
import { createWebhookEndpoint, deleteWebhookEndpoint, rotateWebhookSecret, setWebhookPaused } from '../../lib/webhooks/service';
import { createWidgetClient, deleteWidgetClient, renameClient, setClientDomains } from '../../lib/widget-clients/service';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({ TRUST_PROXY: 'loopback', OUTBOUND_ALLOW_PRIVATE_NETWORKS: '1', INVITATIONS_PER_HOUR: '50' });
  },
  { timeout: 120_000 },
);
after(() => server?.close());

type Row = { actor: string; action: string; target: string; ip: string | null };

async function entriesOf(accountId: number): Promise<Row[]> {
  return rows<Row>(await getDb(), sql`SELECT actor, action, target, ip FROM audit_log WHERE account_id = ${accountId} ORDER BY id`);
}

async function totalEntries(): Promise<number> {
  const [r] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM audit_log`);
  return r!.n;
}

/** Runs `change` and returns exactly the entries it added to the account's log. */
async function added(accountId: number, change: () => Promise<unknown>): Promise<Row[]> {
  const before = (await entriesOf(accountId)).length;
  await change();
  return (await entriesOf(accountId)).slice(before);
}

async function ownerOf(acct: TestAccount): Promise<Actor> {
  const [u] = await rows<{ id: number }>(await getDb(), sql`SELECT id FROM admin_users WHERE email = ${acct.email}`);
  return { accountId: acct.accountId, userId: u!.id, role: 'owner', email: acct.email, name: '' };
}

const ADDRESS = '203.0.113.7';

describe('each audited change writes one entry: actor, action, target, address', () => {
  let acct: TestAccount;
  let owner: Actor;
  let by: AuditBy;
  before(async () => {
    acct = await createTestAccount('Audit Co');
    owner = await ownerOf(acct);
    by = memberBy(acct.email, ADDRESS);
  });

  it('sign-in: succeeded and failed (the address the proxy gave), an unknown email logs nothing, the password never', async () => {
    const headers = { 'x-forwarded-for': ADDRESS };
    assert.deepEqual(await added(acct.accountId, async () => assert.equal((await signIn(server.url, acct.email, acct.password, headers)).ok, true)), [
      { actor: acct.email, action: 'member.signed_in', target: acct.email, ip: ADDRESS },
    ]);
    assert.deepEqual(await added(acct.accountId, async () => assert.equal((await signIn(server.url, acct.email, 'wrong password here', headers)).ok, false)), [
      { actor: acct.email, action: 'member.sign_in_failed', target: acct.email, ip: ADDRESS },
    ]);
    const all = await totalEntries();
    assert.equal((await signIn(server.url, `nobody-${randomUUID()}@example.test`, 'wrong password here', headers)).ok, false);
    assert.equal(await totalEntries(), all, 'an email of no member is logged nowhere');
    const [leak] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM audit_log WHERE target LIKE '%wrong password%'`);
    assert.equal(leak!.n, 0);
  });

  it('member changes: invitation, role, removal, two-factor requirement', async () => {
    const invitee = `new-${randomUUID()}@example.test`;
    assert.deepEqual(await added(acct.accountId, () => inviteMember(by, owner, { email: invitee, role: 'agent' })), [
      { actor: acct.email, action: 'member.invited', target: `${invitee} as agent`, ip: ADDRESS },
    ]);
    const email = `m-${randomUUID()}@example.test`;
    const m = await createAdminUser(by, { accountId: acct.accountId, email, password: 'member password 1', role: 'agent' });
    assert.deepEqual(await added(acct.accountId, () => changeMemberRole(by, owner, { userId: m.user_id, role: 'admin' })), [
      { actor: acct.email, action: 'member.role_changed', target: `${email}: agent → admin`, ip: ADDRESS },
    ]);
    assert.deepEqual(await added(acct.accountId, () => removeMember(by, owner, { userId: m.user_id })), [
      { actor: acct.email, action: 'member.removed', target: email, ip: ADDRESS },
    ]);
    assert.deepEqual(await added(acct.accountId, () => setRequireTwoFactor(by, owner, true)), [
      { actor: acct.email, action: 'account.two_factor_required_changed', target: 'required', ip: ADDRESS },
    ]);
    assert.deepEqual(await added(acct.accountId, () => setRequireTwoFactor(by, owner, false)), [
      { actor: acct.email, action: 'account.two_factor_required_changed', target: 'not required', ip: ADDRESS },
    ]);
  });

  it('API keys created and revoked (the key id and name, never the key)', async () => {
    let key = { key: '', key_id: '' };
    const created = await added(acct.accountId, async () => {
      key = await createApiKey(by, { accountId: acct.accountId, name: 'Zapier' });
    });
    assert.deepEqual(created, [{ actor: acct.email, action: 'api_key.created', target: `${key.key_id} (Zapier)`, ip: ADDRESS }]);
    assert.ok(!created[0]!.target.includes(key.key.slice(-20)));
    assert.deepEqual(await added(acct.accountId, () => revokeApiKey(by, acct.accountId, key.key_id)), [
      { actor: acct.email, action: 'api_key.revoked', target: `${key.key_id} (Zapier)`, ip: ADDRESS },
    ]);
    assert.deepEqual(await added(acct.accountId, () => revokeApiKey(by, acct.accountId, key.key_id)), [], 'revoking again changes nothing');
  });

  it('webhooks and widget clients: created, updated, deleted', async () => {
    let id = '';
    const made = await added(acct.accountId, async () => {
      id = (await createWebhookEndpoint(by, { accountId: acct.accountId, url: 'http://127.0.0.1:9/hook' })).endpoint_id;
    });
    assert.deepEqual(made, [{ actor: acct.email, action: 'webhook.created', target: `${id} http://127.0.0.1:9/hook`, ip: ADDRESS }]);
    assert.deepEqual(
      (
        await added(acct.accountId, async () => {
          await rotateWebhookSecret(by, acct.accountId, id);
          await setWebhookPaused(by, acct.accountId, id, true);
        })
      ).map((e) => [e.action, e.target]),
      [
        ['webhook.updated', `${id}: secret rotated`],
        ['webhook.updated', `${id}: paused`],
      ],
    );
    assert.deepEqual(await added(acct.accountId, () => deleteWebhookEndpoint(by, acct.accountId, id)), [
      { actor: acct.email, action: 'webhook.deleted', target: `${id} http://127.0.0.1:9/hook`, ip: ADDRESS },
    ]);

    let client = '';
    const created = await added(acct.accountId, async () => {
      client = (await createWidgetClient(by, { accountId: acct.accountId, name: 'Shop', domains: ['shop.example'] })).client_id;
    });
    assert.deepEqual(created, [{ actor: acct.email, action: 'widget_client.created', target: `${client} (Shop)`, ip: ADDRESS }]);
    assert.deepEqual(
      (
        await added(acct.accountId, async () => {
          await setClientDomains(by, acct.accountId, client, ['shop.example', 'www.shop.example']);
          await renameClient(by, acct.accountId, client, 'Main shop');
        })
      ).map((e) => e.target),
      [`${client}: domains shop.example, www.shop.example`, `${client}: renamed to Main shop`],
    );
    assert.deepEqual(await added(acct.accountId, () => deleteWidgetClient(by, { accountId: acct.accountId, clientId: client })), [
      { actor: acct.email, action: 'widget_client.deleted', target: client, ip: ADDRESS },
    ]);
  });

  it('bot, model, handoff and email settings (the model key never in the log)', async () => {
    const bot = { instructions: 'Be brief.', noAnswerText: '', model: 'gpt-4o', showSources: true };
    assert.deepEqual(await added(acct.accountId, () => updateBotSettings(by, acct.accountId, bot)), [
      { actor: acct.email, action: 'bot.settings_changed', target: 'instructions, model', ip: ADDRESS },
    ]);
    assert.deepEqual(await added(acct.accountId, () => updateBotSettings(by, acct.accountId, bot)), [], 'saving the same settings changes nothing');
    const model = await added(acct.accountId, () =>
      saveModelEndpoint(by, acct.accountId, { baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-secret-model-key', clearKey: false, embeddingModel: '' }),
    );
    assert.deepEqual(model, [{ actor: acct.email, action: 'model.settings_changed', target: 'http://127.0.0.1:9/v1, key set', ip: ADDRESS }]);
    const handoff = await added(acct.accountId, () => saveHandoffSettings(by, owner, { ...DEFAULT_HANDOFF_SETTINGS, time_zone: 'Europe/Berlin' }));
    assert.deepEqual(handoff, [
      { actor: acct.email, action: 'handoff.settings_changed', target: 'visitors can ask for a person, Europe/Berlin, open 7 days a week', ip: ADDRESS },
    ]);
    assert.deepEqual(await added(acct.accountId, () => saveEmailSettings(by, owner, { ai_answers: false, acknowledge: true })), [
      { actor: acct.email, action: 'email.settings_changed', target: 'AI answers email off, acknowledge new emails on', ip: ADDRESS },
    ]);
    const [leak] = await rows<{ n: number }>(await getDb(), sql`SELECT count(*)::int AS n FROM audit_log WHERE target LIKE '%sk-secret%'`);
    assert.equal(leak!.n, 0);
  });
});

describe('atomicity: no change without its entry, no entry without its change', () => {
  it('a refused change leaves no entry', async () => {
    const acct = await createTestAccount('Refused Co');
    const owner = await ownerOf(acct);
    const by = memberBy(acct.email, ADDRESS);
    const before = await entriesOf(acct.accountId);
    await assert.rejects(changeMemberRole(by, owner, { userId: owner.userId, role: 'agent' }), /owner keeps their role/);
    await assert.rejects(createWebhookEndpoint(by, { accountId: acct.accountId, url: 'ftp://example.test/x' }), /url/);
    await assert.rejects(revokeApiKey(by, acct.accountId, 'NoSuchKey0000000'), /No API key/);
    assert.deepEqual(await entriesOf(acct.accountId), before);
  });

  it('when the entry cannot be written, the change is rolled back', async () => {
    const acct = await createTestAccount('Atomic Co');
    const owner = await ownerOf(acct);
    const by = memberBy(acct.email, ADDRESS);
    const db = await getDb();
    // A real constraint refuses these entries (and nothing else), so the insert fails inside the change's transaction.
    await db.execute(sql.raw(`ALTER TABLE audit_log ADD CONSTRAINT audit_test_refuse CHECK (target NOT LIKE '%refuse-me%') NOT VALID`));
    try {
      await assert.rejects(createApiKey(by, { accountId: acct.accountId, name: 'refuse-me' }));
      const [keys] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM api_keys WHERE account_id = ${acct.accountId} AND name = 'refuse-me'`);
      assert.equal(keys!.n, 0, 'no key without its entry');
      await assert.rejects(inviteMember(by, owner, { email: 'refuse-me@example.test', role: 'agent' }));
      const [inv] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM invitations WHERE email = 'refuse-me@example.test'`);
      assert.equal(inv!.n, 0, 'no invitation without its entry');
      const [mails] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM mails WHERE "to" = 'refuse-me@example.test'`);
      assert.equal(mails!.n, 0, 'nor its mail');
      await assert.rejects(createWidgetClient(by, { accountId: acct.accountId, name: 'refuse-me', domains: ['x.example'] }));
      const [clients] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM widget_clients WHERE account_id = ${acct.accountId}`);
      assert.equal(clients!.n, 0, 'no widget client (nor its channel) without its entry');
    } finally {
      await db.execute(sql.raw('ALTER TABLE audit_log DROP CONSTRAINT audit_test_refuse'));
    }
    assert.deepEqual(
      (await entriesOf(acct.accountId)).map((e) => e.action),
      ['api_key.created'],
      "only the test account's own key",
    );
  });
});

describe('append-only, retention', () => {
  /** The trigger's refusal, under drizzle's wrapper: SQLSTATE 42501 and its message. */
  const appendOnly = (e: unknown) => {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code === '42501' && /audit_log is append-only/.test(cause.message ?? '');
  };

  it('UPDATE, DELETE and TRUNCATE are refused by the database', async () => {
    const acct = await createTestAccount('Append Co');
    const db = await getDb();
    await assert.rejects(db.execute(sql`UPDATE audit_log SET actor = 'someone else' WHERE account_id = ${acct.accountId}`), appendOnly);
    await assert.rejects(db.execute(sql`DELETE FROM audit_log WHERE account_id = ${acct.accountId}`), appendOnly);
    await assert.rejects(db.execute(sql.raw('TRUNCATE audit_log')), appendOnly);
    assert.equal((await entriesOf(acct.accountId)).length, 1, 'the key creation entry is still there');
  });

  it('pruning deletes only entries older than the retention, in batches', async () => {
    const acct = await createTestAccount('Prune Co');
    const db = await getDb();
    const old = (days: number, n: number) =>
      db.execute(sql`INSERT INTO audit_log (account_id, at, actor, action, target)
        SELECT ${acct.accountId}, now() - make_interval(days => ${days}), 'cli', 'api_key.created', 'old ' || g FROM generate_series(1, ${n}) g`);
    await old(400, 5);
    await old(300, 2);
    assert.deepEqual(await pruneAuditBatch(365, 3), { deleted: 3, more: true });
    assert.deepEqual(await pruneAuditBatch(365, 3), { deleted: 2, more: false });
    assert.deepEqual(await pruneAuditBatch(365, 3), { deleted: 0, more: false });
    const [left] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM audit_log WHERE account_id = ${acct.accountId}`);
    assert.equal(left!.n, 3, 'the 300-day-old entries and the key creation stay');
  });
});

describe('reading the log: paging, filters, roles, tenancy', () => {
  let acct: TestAccount;
  let other: TestAccount;
  before(async () => {
    acct = await createTestAccount('Pages Co');
    other = await createTestAccount('Other Co');
    const db = await getDb();
    await db.transaction(async (tx) => {
      for (let i = 0; i < 120; i++) {
        await insertAuditEntry(tx as unknown as Db, acct.accountId, {
          actor: i % 3 === 0 ? 'cli' : acct.email,
          action: i % 2 === 0 ? 'webhook.created' : 'bot.settings_changed',
          target: `#${i}`,
          ip: null,
        });
      }
    });
  });

  it('newest first, 50 a page, keyset pages that end', async () => {
    const first = await auditPage(acct.accountId, { member: '', action: '' });
    assert.equal(first.entries.length, AUDIT_PAGE_SIZE);
    assert.equal(first.entries[0]!.target, '#119');
    assert.ok(first.next !== null);
    const second = await auditPage(acct.accountId, { member: '', action: '', before: first.next! });
    assert.equal(second.entries[0]!.target, '#69');
    const third = await auditPage(acct.accountId, { member: '', action: '', before: second.next! });
    assert.deepEqual(
      third.entries.slice(0, 20).map((e) => e.target),
      Array.from({ length: 20 }, (_, i) => `#${19 - i}`),
    );
    assert.equal(third.entries.length, 21, 'the 20 oldest and, oldest of all, the test key creation');
    assert.equal(third.entries[20]!.action, 'api_key.created');
    assert.equal(third.next, null);
  });

  it('filters "Member" and "Action", alone and together', async () => {
    const byCli = await auditPage(acct.accountId, { member: 'cli', action: '' });
    assert.ok(byCli.entries.every((e) => e.actor === 'cli'));
    assert.equal(byCli.entries.length, 41, '40 inserted and the key creation');
    const both = await auditPage(acct.accountId, { member: acct.email, action: 'bot.settings_changed' });
    assert.equal(both.entries.length, 40, 'the odd ones not by the CLI');
    assert.ok(both.entries.every((e) => e.actor === acct.email && e.action === 'bot.settings_changed'));
    assert.equal(both.next, null);
    const actors = await auditActors(acct.accountId);
    assert.deepEqual(actors, [acct.email, 'cli', 'system']);
  });

  it("another account's entries are never visible, not even through a page cursor", async () => {
    const mine = await auditPage(acct.accountId, { member: '', action: '' });
    const theirs = await auditPage(other.accountId, { member: '', action: '' });
    assert.equal(theirs.entries.length, 1);
    assert.ok(!theirs.entries.some((e) => mine.entries.some((m) => m.id === e.id)));
    assert.deepEqual((await auditPage(other.accountId, { member: '', action: '', before: mine.next! })).entries, []);
    assert.equal((await listAudit({ accountId: other.accountId })).entries.length, 1);
  });

  it('/audit: owner and admins see the page with its filters; an agent gets the 404 page and no link', async () => {
    const agentEmail = `agent-${randomUUID()}@example.test`;
    const adminEmail = `admin-${randomUUID()}@example.test`;
    await createAdminUser(memberBy(acct.email, null), { accountId: acct.accountId, email: agentEmail, password: 'agent password 1', role: 'agent' });
    await createAdminUser(memberBy(acct.email, null), { accountId: acct.accountId, email: adminEmail, password: 'admin password 1', role: 'admin' });
    const page = async (email: string, password: string, path: string) => {
      const cookie = (await signIn(server.url, email, password)).cookie!;
      const res = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: 'manual' });
      return { status: res.status, html: await res.text() };
    };
    for (const [email, password] of [
      [acct.email, acct.password],
      [adminEmail, 'admin password 1'],
    ] as const) {
      const r = await page(email, password, '/audit?action=webhook.created');
      assert.equal(r.status, 200);
      assert.match(r.html, /<h1>Audit log<\/h1>/);
      assert.match(r.html, /<label for="audit-member">Member<\/label>/);
      assert.match(r.html, /<label for="audit-action">Action<\/label>/);
      assert.match(r.html, /href="\/audit"/, 'the navigation links the page');
      assert.match(r.html, /href="\/audit\?action=webhook.created&amp;before=\d+">Older entries/);
    }
    const agent = await page(agentEmail, 'agent password 1', '/audit');
    assert.equal(agent.status, 404);
    assert.doesNotMatch(agent.html, /href="\/audit"/);
  });

  it('every action name is dotted and listed once', () => {
    assert.equal(new Set(AUDIT_ACTIONS).size, AUDIT_ACTIONS.length);
    for (const a of AUDIT_ACTIONS) assert.match(a, /^[a-z_]+\.[a-z_]+$/);
  });
});
