/** CLI doors of the team (docs/contracts.md §13): user create --role/--name, member list, mail list; and the roles migration. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { insertMail } from '../../db/queries/mails';
import { inDb, parseSuccess, runCli, useCliDatabase } from '../helpers/cli';

const cliDb = useCliDatabase();
after(() => cliDb.cleanup());

async function account() {
  const email = `owner-${randomUUID()}@example.test`;
  const out = parseSuccess(await runCli(['account', 'create', '--name', 'Team Co', '--admin-email', email, '--admin-password', 'a long enough password']));
  return { accountId: out.account_id as number, email };
}

describe('CLI: members', () => {
  it("the account's first user is its owner; user create defaults to admin and takes --role and --name; member list prints them", async () => {
    const { accountId, email } = await account();
    const admin = `admin-${randomUUID()}@example.test`;
    const agent = `agent-${randomUUID()}@example.test`;
    parseSuccess(await runCli(['user', 'create', '--account', String(accountId), '--email', admin, '--password', 'admin password']));
    const out = parseSuccess(
      await runCli([
        'user',
        'create',
        '--account',
        String(accountId),
        '--email',
        agent,
        '--password',
        'agent password',
        '--role',
        'agent',
        '--name',
        'Ada Agent',
      ]),
    );
    assert.deepEqual(Object.keys(out).sort(), ['account_id', 'email', 'user_id']);
    const list = parseSuccess(await runCli(['member', 'list', '--account', String(accountId)]));
    assert.deepEqual(Object.keys(list), ['members']);
    const members = list.members as Array<Record<string, unknown>>;
    for (const m of members) assert.deepEqual(Object.keys(m).sort(), ['email', 'name', 'role', 'two_factor', 'user_id']);
    assert.deepEqual(
      members.map((m) => [m.email, m.role, m.name, m.two_factor]),
      [
        [email, 'owner', '', false],
        [admin, 'admin', '', false],
        [agent, 'agent', 'Ada Agent', false],
      ],
    );
    assert.equal(members[2]!.user_id, out.user_id);
  });

  it('refuses a second owner, an unknown role and an unknown account, writing nothing', async () => {
    const { accountId } = await account();
    const cases: Array<[string[], RegExp]> = [
      [['--role', 'owner'], /already has an owner/],
      [['--role', 'boss'], /role.*owner, admin or agent/],
    ];
    for (const [extra, stderr] of cases) {
      const r = await runCli([
        'user',
        'create',
        '--account',
        String(accountId),
        '--email',
        `x-${randomUUID()}@example.test`,
        '--password',
        'long enough pw',
        ...extra,
      ]);
      assert.notEqual(r.code, 0);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, stderr);
    }
    const list = parseSuccess(await runCli(['member', 'list', '--account', String(accountId)]));
    assert.equal((list.members as unknown[]).length, 1);
    const missing = await runCli(['member', 'list', '--account', '999999']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /999999/);
  });
});

describe('CLI: mail list', () => {
  it('prints the outbox newest first, filtered by --to, with to, subject, text, created_at, sent_at', async () => {
    const to = `someone-${randomUUID()}@example.test`;
    await inDb(async (db) => {
      await insertMail(db, 0, { to, subject: 'first', text: 'one', html: '<p>one</p>' });
      await insertMail(db, 0, { to, subject: 'second', text: 'two', html: '<p>two</p>' });
      await insertMail(db, 0, { to: `other-${randomUUID()}@example.test`, subject: 'elsewhere', text: '3', html: '3' });
    });
    const out = parseSuccess(await runCli(['mail', 'list', '--to', to.toUpperCase()]));
    const mails = out.mails as Array<Record<string, unknown>>;
    assert.deepEqual(
      mails.map((m) => m.subject),
      ['second', 'first'],
    );
    for (const m of mails) {
      for (const k of ['to', 'subject', 'text', 'created_at', 'sent_at']) assert.ok(k in m, k);
      assert.equal(m.sent_at, null);
      assert.equal(m.status, 'pending');
      assert.match(String(m.created_at), /^\d{4}-\d\d-\d\dT/);
    }
    const all = parseSuccess(await runCli(['mail', 'list']));
    assert.ok((all.mails as unknown[]).length >= 3);
    const bad = await runCli(['mail', 'list', '--to', 'not-an-address']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /email/);
  });
});

describe('migration 0014', () => {
  it("makes each account's first user its owner and the others admins", async () => {
    const dir = path.resolve('db/migrations');
    const files = fs
      .readdirSync(dir)
      .filter((f) => /^\d{4}_.*\.sql$/.test(f))
      .sort();
    const pg = await PGlite.create({ extensions: { pg_trgm } });
    try {
      const apply = async (f: string) => {
        for (const stmt of fs.readFileSync(path.join(dir, f), 'utf8').split('--> statement-breakpoint')) if (stmt.trim()) await pg.exec(stmt);
      };
      const before = files.filter((f) => f < '0014');
      for (const f of before) await apply(f);
      await pg.exec(`INSERT INTO accounts (id, name) VALUES (1, 'a'), (2, 'b');
        INSERT INTO admin_users (id, account_id, email, password_hash) VALUES
          (10, 2, 'b1@x.test', 'h'), (11, 1, 'a1@x.test', 'h'), (12, 1, 'a2@x.test', 'h'), (13, 2, 'b2@x.test', 'h');`);
      await apply(files.find((f) => f.startsWith('0014'))!);
      const r = await pg.query<{ id: number; role: string; name: string }>('SELECT id, role, name FROM admin_users ORDER BY id');
      assert.deepEqual(
        r.rows.map((x) => [x.id, x.role, x.name]),
        [
          [10, 'owner', ''],
          [11, 'owner', ''],
          [12, 'admin', ''],
          [13, 'admin', ''],
        ],
      );
    } finally {
      await pg.close();
    }
  });
});
