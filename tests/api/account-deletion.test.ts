/**
 * Deleting an account (docs/contracts.md §18): two accounts full of rows, one deleted. Its doors shut
 * at once (key, widget token, open widget and inbox sockets, sessions, sign-in), then every table holds
 * nothing of it (read from information_schema, so a new table with account_id fails here until
 * ACCOUNT_HOLDINGS lists it) while the other account's counts stay identical. On PostgreSQL a CLI in
 * another process deletes a third account and this server's sockets close through Redis.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows, type Db } from '../../db/client';
import { ACCOUNT_HOLDINGS } from '../../db/queries/account-deletion';
import { createAdminUser } from '../../lib/accounts/service';
import { CLI } from '../../lib/audit/contract';
import { deleteAccountAsOwner } from '../../lib/privacy/account-deletion';
import { createWebhookEndpoint } from '../../lib/webhooks/service';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type TestAccount } from '../helpers/builders';
import { connectMember, type InboxMember } from '../helpers/inbox';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import {
  addKnowledge,
  backendToken,
  connectVisitor,
  createTestWidgetClient,
  eventually,
  tokenRequest,
  upload,
  type Visitor,
  type WidgetClient,
} from '../helpers/widget';

const ORIGIN = 'https://example.com';
const postgres = process.env.TEST_DB === 'postgres';
const redisEnv: Record<string, string> = postgres
  ? { REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/13', REDIS_PREFIX: `svc-accdel-${randomUUID().slice(0, 8)}:` }
  : {};

let server: TestServer;
let db: Db;
const hook = new WebhookReceiver(() => ({ status: 500 }));
before(
  async () => {
    await hook.start();
    server = await startTestServer({
      ...redisEnv,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      ACCOUNT_DELETION_BATCH: '7',
      ACCOUNT_DELETION_SWEEP_SECONDS: '0.2',
      ACCOUNT_DELETION_LEASE_SECONDS: '5',
    });
    db = await getDb();
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await hook.stop().catch(() => {});
    await server?.close();
  },
  { timeout: 30_000 },
);

type Filled = TestAccount & { name: string; client: WidgetClient; admin: Member; agent: Member };
type Member = { userId: number; email: string; password: string };

async function member(accountId: number, role: 'admin' | 'agent'): Promise<Member> {
  const email = `${role}-${randomUUID()}@example.test`;
  const u = await createAdminUser(CLI, { accountId, email, password: 'correct horse battery', role });
  return { userId: u.user_id, email, password: 'correct horse battery' };
}

/** An account with a bit of everything: imported and widget conversations, an upload's bytes, knowledge, a webhook, members. */
async function filledAccount(name: string): Promise<Filled> {
  const acct = await createTestAccount(name);
  const [channel] = await newChannelIds(1);
  const lines = Array.from({ length: 6 }, () => conversationLine({ channel_id: channel! })).flatMap((c) => [c, responseLine(c), responseLine(c)]);
  await importLines(acct.accountId, lines);
  await createWebhookEndpoint(CLI, { accountId: acct.accountId, url: hook.url });
  await addKnowledge(acct.accountId, 'returns.md', '# Returns\n\nYou may return any item within 30 days of delivery.');
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const token = await backendToken(server.url, client);
  const up = await upload(server.url, token.access_token, [{ name: 'note.txt', data: Buffer.from('hello world\n'.repeat(30_000)), type: 'text/plain' }]);
  assert.equal(up.status, 201, JSON.stringify(up.body));
  const visitor = await connectVisitor(server.url, token.access_token, ORIGIN);
  const asked = await visitor.ok<{ response_id: string }>('ask', { client_message_id: 'q1', text: 'Can I return an item?' });
  await visitor.finished(asked.response_id);
  visitor.close();
  return { ...acct, name, client, admin: await member(acct.accountId, 'admin'), agent: await member(acct.accountId, 'agent') };
}

/** Every table with an account_id column, from the database itself. */
async function accountTables(): Promise<string[]> {
  const found = await rows<{ table_name: string }>(
    db,
    sql`SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
    WHERE c.table_schema = 'public' AND c.column_name = 'account_id' AND t.table_type = 'BASE TABLE' ORDER BY 1`,
  );
  return found.map((r) => r.table_name);
}

/** The account's rows per table: every account_id table, and the tables reached through a parent. */
async function holdings(accountId: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of await accountTables()) {
    const [r] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)} WHERE account_id = ${accountId}`);
    out[table] = r!.n;
  }
  const [a] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM accounts WHERE id = ${accountId}`);
  out.accounts = a!.n;
  const children = {
    upload_chunks: sql`upload_id IN (SELECT id FROM attachments WHERE account_id = ${accountId})`,
    conversation_events: sql`conversation_id IN (SELECT id FROM conversations WHERE account_id = ${accountId})`,
    response_feedback: sql`response_id IN (SELECT id FROM responses WHERE account_id = ${accountId})`,
    admin_sessions: sql`user_id IN (SELECT id FROM admin_users WHERE account_id = ${accountId})`,
    recovery_codes: sql`user_id IN (SELECT id FROM admin_users WHERE account_id = ${accountId})`,
    email_tokens: sql`user_id IN (SELECT id FROM admin_users WHERE account_id = ${accountId})`,
  };
  for (const [table, where] of Object.entries(children)) {
    const [r] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table)} WHERE ${where}`);
    out[table] = r!.n;
  }
  return out;
}

const owner = (a: Filled, role: 'owner' | 'admin' | 'agent' = 'owner') => ({ accountId: a.accountId, role, email: a.email });
const refusedWith = (code: string) => (e: unknown) => (e as { code?: string }).code === code;

describe('deleting an account', () => {
  let a: Filled;
  let b: Filled;
  before(
    async () => {
      a = await filledAccount(`Deleted Co ${randomUUID().slice(0, 6)}`);
      b = await filledAccount(`Kept Co ${randomUUID().slice(0, 6)}`);
    },
    { timeout: 120_000 },
  );

  it('covers every table with an account_id column (a new table must join ACCOUNT_HOLDINGS)', async () => {
    const listed = new Set(ACCOUNT_HOLDINGS.map((h) => h.table));
    const missing = (await accountTables()).filter((t) => !listed.has(t));
    assert.deepEqual(missing, [], `tables with account_id that account deletion does not delete: ${missing.join(', ')}`);
  });

  it('is the owner’s alone, and only with the account name: admins and agents get 403, a wrong name deletes nothing', async () => {
    const before = await holdings(a.accountId);
    await assert.rejects(deleteAccountAsOwner(owner(a, 'admin'), a.name), refusedWith('forbidden'));
    await assert.rejects(deleteAccountAsOwner(owner(a, 'agent'), a.name), refusedWith('forbidden'));
    await assert.rejects(deleteAccountAsOwner(owner(a), `${a.name}x`), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'invalid_request');
      assert.match(e.message, /does not match the account name; nothing was deleted/);
      return true;
    });
    await assert.rejects(deleteAccountAsOwner(owner(a), ''), refusedWith('invalid_request'));
    assert.deepEqual(await holdings(a.accountId), before);
    assert.equal((await api(server.url, a.key)('/customer-api/v2/response')).status, 200);
  });

  it('shuts every door at once, then removes every row and byte of it, and nothing of the other account', async () => {
    const kept = await holdings(b.accountId);
    assert.ok(kept.conversations! >= 7 && kept.upload_chunks! >= 2 && kept.conversation_events! > 0 && kept.webhook_events! > 0, JSON.stringify(kept));
    const held = await holdings(a.accountId);
    assert.ok(Object.values(held).every((n) => n >= 0));

    const ownerSession = await signIn(server.url, a.email, a.password);
    const agentSession = await signIn(server.url, a.agent.email, a.agent.password);
    assert.ok(ownerSession.cookie && agentSession.cookie);
    const inbox: InboxMember = await connectMember(server.url, agentSession.cookie!);
    const token = await backendToken(server.url, a.client);
    const visitor: Visitor = await connectVisitor(server.url, token.access_token, ORIGIN);
    const key = api(server.url, a.key);
    assert.equal((await key('/customer-api/v2/response')).status, 200); // cached by this instance now

    assert.deepEqual(await deleteAccountAsOwner(owner(a), ` ${a.name} `), { deleted: true, account_id: a.accountId });

    // At once: no waiting for a cache to expire.
    assert.equal((await key('/customer-api/v2/response')).status, 401);
    assert.equal((await key('/customer-api/v2/conversation')).status, 401);
    const refusedToken = await tokenRequest(server.url, { client_id: a.client.client_id, client_secret: a.client.client_secret });
    assert.ok(refusedToken.status === 404 || refusedToken.status === 401, `token endpoint: ${refusedToken.status}`);
    assert.equal((await upload(server.url, token.access_token, [{ name: 'x.txt', data: Buffer.from('x') }])).status, 401);
    await visitor.until(() => visitor.disconnectReason !== undefined, 'the widget socket to close', 5000);
    await inbox.until(() => inbox.disconnected !== undefined, 'the inbox socket to close', 5000);
    for (const cookie of [ownerSession.cookie!, agentSession.cookie!]) {
      assert.equal((await fetch(`${server.url}/customer-api/v2/response`, { headers: { cookie } })).status, 401);
      const page = await fetch(`${server.url}/`, { headers: { cookie }, redirect: 'manual' });
      assert.ok(page.status === 307 || page.status === 303 || page.status === 302, `dashboard: ${page.status}`);
      assert.match(page.headers.get('location') ?? '', /\/login/);
    }
    assert.equal((await signIn(server.url, a.admin.email, a.admin.password)).ok, false, 'a member of a deleted account cannot sign in');
    // Again: already being deleted (conflict), or already gone (not found) when the sweep was quicker.
    await assert.rejects(deleteAccountAsOwner(owner(a), a.name), (e: { code?: string }) => e.code === 'conflict' || e.code === 'not_found');

    // This instance's sweep deletes the rows in batches of 7; the account's own row goes last.
    await eventually(
      () => holdings(a.accountId),
      (h) => h.accounts === 0,
      'the deletion to finish',
      30_000,
    );
    const left = Object.entries(await holdings(a.accountId)).filter(([, n]) => n > 0);
    assert.deepEqual(left, [], 'nothing of the deleted account is left');
    assert.deepEqual(await holdings(b.accountId), kept, 'the other account is untouched');
    assert.equal((await api(server.url, b.key)('/customer-api/v2/response')).status, 200);
    const bToken = await backendToken(server.url, b.client);
    (await connectVisitor(server.url, bToken.access_token, ORIGIN)).close();
  });

  it('from the CLI in another process: this server’s open widget and inbox sockets close at once (Redis)', { skip: !postgres }, async () => {
    const name = `Cli Co ${randomUUID().slice(0, 6)}`;
    const c = await createTestAccount(name);
    const client = await createTestWidgetClient(c.accountId, ['example.com']);
    const session = await signIn(server.url, c.email, c.password);
    const inbox = await connectMember(server.url, session.cookie!);
    const visitor = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, ORIGIN);
    const env: NodeJS.ProcessEnv = { ...process.env, ...redisEnv };
    delete env.NODE_TEST_CONTEXT;
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', 'account', 'delete', '--account', String(c.accountId), '--confirm', name], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, stderr);
    assert.deepEqual(JSON.parse(stdout), { deleted: true, account_id: c.accountId });
    await visitor.until(() => visitor.disconnectReason !== undefined, 'the widget socket to close', 5000);
    await inbox.until(() => inbox.disconnected !== undefined, 'the inbox socket to close', 5000);
    assert.deepEqual(
      Object.entries(await holdings(c.accountId)).filter(([, n]) => n > 0),
      [],
    );
  });
});
