/** The admin CLI's successful commands (docs/contracts.md §2, §5): one JSON object on stdout, and what it stored. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { inArray, sql } from 'drizzle-orm';
import { getAdminUserByEmail } from '../../db/queries/accounts';
import { getApiKeyForAuth } from '../../db/queries/api-keys';
import { rows, type Db } from '../../db/client';
import { apiKeys } from '../../db/schema';
import { parseApiKey, secretMatches } from '../../lib/auth/api-keys';
import { verifyPassword } from '../../lib/auth/passwords';
import { inDb, parseSuccess, runCli, useCliDatabase } from '../helpers/cli';
import { recordServerAddress } from '../../lib/demo/seed';

const cliDb = useCliDatabase();
after(() => cliDb.cleanup());

const KEY_FORMAT = /^svc_(live|test)_([0-9A-Za-z]{12,})_([0-9A-Za-z]{32,})$/;

async function createAccountByCli(name = 'CLI Co') {
  const email = `admin-${randomUUID()}@example.test`;
  const password = 'a long enough password';
  const out = parseSuccess(await runCli(['account', 'create', '--name', name, '--admin-email', email, '--admin-password', password]));
  return { out, email, password, accountId: out.account_id as number };
}

/** The stored key row matches the printed key: same id, secret verifies, secret itself not stored. */
async function assertKeyStored(db: Db, key: string, accountId: number, env: 'live' | 'test') {
  const parsed = parseApiKey(key);
  assert.ok(parsed, `parseable key ${key}`);
  const row = await getApiKeyForAuth(db, parsed.keyId);
  assert.ok(row, 'key row stored');
  assert.equal(row.accountId, accountId);
  assert.equal(row.env, env);
  assert.equal(row.revokedAt, null);
  assert.ok(secretMatches(parsed.secret, row.secretHash));
  assert.ok(!secretMatches(`${parsed.secret.slice(0, -1)}${parsed.secret.endsWith('A') ? 'B' : 'A'}`, row.secretHash));
  const [raw] = await rows<{ j: string }>(db, sql`SELECT row_to_json(k)::text AS j FROM api_keys k WHERE key_id = ${parsed.keyId}`);
  assert.ok(!raw!.j.includes(parsed.secret), 'the secret is not stored in clear');
}

describe('CLI: account create', () => {
  it('prints exactly account_id, name and admin_email, and the admin can sign in with the password', async () => {
    const name = `Acme ${randomUUID()}`;
    const { out, email, password } = await createAccountByCli(name);
    assert.deepEqual(Object.keys(out).sort(), ['account_id', 'admin_email', 'name']);
    assert.ok(Number.isInteger(out.account_id) && (out.account_id as number) > 0, `account_id ${String(out.account_id)}`);
    assert.equal(out.name, name);
    assert.equal(out.admin_email, email);
    await inDb(async (db) => {
      const [account] = await rows<{ name: string }>(db, sql`SELECT name FROM accounts WHERE id = ${out.account_id as number}`);
      assert.equal(account?.name, name);
      const user = await getAdminUserByEmail(db, email);
      assert.ok(user);
      assert.equal(user.accountId, out.account_id);
      assert.notEqual(user.passwordHash, password);
      assert.equal(await verifyPassword(password, user.passwordHash), true);
      assert.equal(await verifyPassword('another password', user.passwordHash), false);
    });
  });
});

describe('CLI: apikey create, apikey revoke and user create on one account', () => {
  let accountId: number;
  before(async () => {
    accountId = (await createAccountByCli('Key owner')).accountId;
  });

  it('creates a live key by default: svc_live_<key id>_<secret>, shown once, stored as a hash', async () => {
    const out = parseSuccess(await runCli(['apikey', 'create', '--account', String(accountId)]));
    assert.deepEqual(Object.keys(out).sort(), ['account_id', 'key', 'key_id']);
    assert.equal(out.account_id, accountId);
    const m = KEY_FORMAT.exec(out.key as string);
    assert.ok(m, `key format: ${String(out.key)}`);
    assert.equal(m[1], 'live');
    assert.equal(m[2], out.key_id);
    await inDb((db) => assertKeyStored(db, out.key as string, accountId, 'live'));
  });

  it('--env test and --name label the key; every key is different', async () => {
    const a = parseSuccess(await runCli(['apikey', 'create', '--account', String(accountId), '--env', 'test', '--name', 'CI key']));
    const b = parseSuccess(await runCli(['apikey', 'create', '--account', String(accountId), '--env', 'live', '--name', 'Prod']));
    const ka = KEY_FORMAT.exec(a.key as string);
    const kb = KEY_FORMAT.exec(b.key as string);
    assert.ok(ka && kb);
    assert.equal(ka[1], 'test');
    assert.equal(kb[1], 'live');
    assert.notEqual(ka[2], kb[2]);
    assert.notEqual(ka[3], kb[3]);
    await inDb(async (db) => {
      await assertKeyStored(db, a.key as string, accountId, 'test');
      await assertKeyStored(db, b.key as string, accountId, 'live');
      const names = await db
        .select({ keyId: apiKeys.keyId, name: apiKeys.name })
        .from(apiKeys)
        .where(inArray(apiKeys.keyId, [a.key_id as string, b.key_id as string]));
      assert.deepEqual(
        names.map((n) => [n.keyId, n.name]).sort(),
        [
          [a.key_id, 'CI key'],
          [b.key_id, 'Prod'],
        ].sort(),
      );
    });
  });

  it('apikey revoke prints key_id and revoked: true, revokes that key only', async () => {
    const keep = parseSuccess(await runCli(['apikey', 'create', '--account', String(accountId)]));
    const gone = parseSuccess(await runCli(['apikey', 'create', '--account', String(accountId)]));
    const out = parseSuccess(await runCli(['apikey', 'revoke', '--key-id', gone.key_id as string]));
    assert.deepEqual(out, { key_id: gone.key_id, revoked: true });
    await inDb(async (db) => {
      assert.notEqual((await getApiKeyForAuth(db, gone.key_id as string))?.revokedAt ?? null, null);
      assert.equal((await getApiKeyForAuth(db, keep.key_id as string))?.revokedAt, null);
    });
  });

  it('user create adds another admin to the account: user_id, account_id, email', async () => {
    const email = `second-${randomUUID()}@example.test`;
    const out = parseSuccess(await runCli(['user', 'create', '--account', String(accountId), '--email', email, '--password', 'second admin pw']));
    assert.deepEqual(Object.keys(out).sort(), ['account_id', 'email', 'user_id']);
    assert.equal(out.account_id, accountId);
    assert.equal(out.email, email);
    await inDb(async (db) => {
      const user = await getAdminUserByEmail(db, email);
      assert.ok(user);
      assert.equal(user.id, out.user_id);
      assert.equal(user.accountId, accountId);
      assert.equal(await verifyPassword('second admin pw', user.passwordHash), true);
    });
  });
});

describe('CLI: widget client create', () => {
  it('prints client_id, name, client_secret, domains and channel_id; reduces pasted addresses to hosts', async () => {
    const { accountId } = await createAccountByCli('Widget Co');
    const out = parseSuccess(
      await runCli([
        'widget',
        'client',
        'create',
        '--account',
        String(accountId),
        '--domain',
        'https://Shop.Example/path?x=1',
        '--domain',
        '*.example.org',
        '--name',
        'Online shop',
      ]),
    );
    assert.deepEqual(Object.keys(out).sort(), ['channel_id', 'client_id', 'client_secret', 'domains', 'name']);
    assert.equal(out.name, 'Online shop');
    assert.deepEqual(out.domains, ['shop.example', '*.example.org']);
    const unnamed = parseSuccess(await runCli(['widget', 'client', 'create', '--account', String(accountId), '--domain', 'docs.example:8443']));
    assert.equal(unnamed.name, 'docs.example');
    assert.deepEqual(unnamed.domains, ['docs.example']);
    assert.deepEqual(parseSuccess(await runCli(['widget', 'client', 'delete', '--client-id', unnamed.client_id as string])), {
      client_id: unnamed.client_id,
      deleted: true,
    });
    const again = await runCli(['widget', 'client', 'delete', '--client-id', unnamed.client_id as string]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /No widget client wc_/);
    const left = await inDb((db) => rows<{ id: string }>(db, sql`SELECT id FROM widget_clients WHERE account_id = ${accountId}`));
    assert.deepEqual(
      left.map((r) => r.id),
      [out.client_id],
    );
  });

  it('refuses a non-domain with the reason and writes nothing', async () => {
    const { accountId } = await createAccountByCli('Widget Co 2');
    const r = await runCli(['widget', 'client', 'create', '--account', String(accountId), '--domain', 'not a domain!!']);
    assert.notEqual(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /"not a domain!!" contains a space: give one domain per line/);
    const [n] = await inDb((db) => rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM widget_clients WHERE account_id = ${accountId}`));
    assert.equal(n!.n, 0);
  });
});

describe('CLI: seed --demo', () => {
  it('creates a demo account with data and prints a working admin login and API key', async () => {
    const out = parseSuccess(await runCli(['seed', '--demo']));
    for (const k of ['account_id', 'admin_email', 'admin_password', 'api_key']) assert.ok(k in out, `prints ${k}`);
    const accountId = out.account_id as number;
    assert.ok(Number.isInteger(accountId));
    assert.match(out.api_key as string, KEY_FORMAT);
    await inDb(async (db) => {
      await assertKeyStored(db, out.api_key as string, accountId, 'live');
      const user = await getAdminUserByEmail(db, out.admin_email as string);
      assert.equal(user?.accountId, accountId);
      assert.equal(await verifyPassword(out.admin_password as string, user!.passwordHash), true);
      const [counts] = await rows<{ c: number; r: number }>(
        db,
        sql`
        SELECT (SELECT count(*)::int FROM conversations WHERE account_id = ${accountId}) AS c,
               (SELECT count(*)::int FROM responses WHERE account_id = ${accountId}) AS r`,
      );
      assert.ok(counts!.c > 0 && counts!.r > 0, `demo data: ${JSON.stringify(counts)}`);
    });
  });

  it('prints the address the server answers on and the README variables with real ids', async () => {
    const out = parseSuccess(await runCli(['seed', '--demo'], { HOST: '0.0.0.0', PORT: '4123', NEXTAUTH_URL: undefined }));
    assert.equal(out.server_url, 'http://localhost:4123');
    assert.equal(out.login_url, 'http://localhost:4123/login');
    assert.match(out.curl as string, /"http:\/\/localhost:4123\/customer-api\/v2\/response\?resultsPerPage=5"$/);
    const vars = out.readme_variables as string[];
    assert.equal(vars[1], 'BASE=http://localhost:4123/customer-api/v2');
    assert.equal(vars[2], `CONVERSATION=${out.conversation_id}`);
    assert.equal(vars[3], `ATTACHMENT=${out.attachment_id}`);
  });

  it('prints the address the last server started on this database recorded; --url wins over everything', async () => {
    await inDb(() => recordServerAddress('http://localhost:3687'));
    const out = parseSuccess(await runCli(['seed', '--demo'], { NEXTAUTH_URL: undefined }));
    assert.equal(out.server_url, 'http://localhost:3687');
    assert.equal(out.login_url, 'http://localhost:3687/login');
    const behind = parseSuccess(await runCli(['seed', '--demo'], { NEXTAUTH_URL: 'https://svc.example.com/' }));
    assert.equal(behind.server_url, 'https://svc.example.com', 'NEXTAUTH_URL: the public address, without its trailing slash');
    const given = parseSuccess(await runCli(['seed', '--demo', '--url', 'https://support.example.org/'], { NEXTAUTH_URL: 'https://svc.example.com' }));
    assert.equal(given.server_url, 'https://support.example.org');
    assert.match(given.curl as string, /"https:\/\/support\.example\.org\/customer-api\/v2\/response\?resultsPerPage=5"$/);
  });

  for (const [url, shown] of [
    ['ftp://example.com', '"ftp://example.com"'],
    ['localhost:3000', '"localhost:3000"'],
    ['http://x.test/?a=1', '"http://x.test/?a=1"'],
    ['', '""'],
  ] as const) {
    it(`refuses --url ${shown} before creating anything`, async () => {
      const [before] = await inDb((db) => rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM accounts`));
      const r = await runCli(['seed', '--demo', '--url', url]);
      assert.notEqual(r.code, 0);
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr.trim(),
        `error: --url must be an http(s) address such as http://localhost:3000, got ${shown} (usage: npm run --silent cli -- seed --demo [--url URL])`,
      );
      const [after] = await inDb((db) => rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM accounts`));
      assert.equal(after!.n, before!.n, 'no demo account');
    });
  }
});
