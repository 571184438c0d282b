/**
 * The admin CLI's failures (docs/contracts.md §2): non-zero exit, one line on stderr, nothing on stdout,
 * and nothing half-written anywhere in the database.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTestAccount, type TestAccount } from '../helpers/builders';
import { closeDatabase, getDb, type Db } from '../../db/client';
import { countAll, inDb, runCli, snapshotAccount, tempFile, testDbKind, useCliDatabase, type CliResult } from '../helpers/cli';

const cliDb = useCliDatabase();
after(() => cliDb.cleanup());

const PASSWORD = 'a long enough password';
let acct: TestAccount;
let validFile: string;
/** The database as it was after the last case; a failure must leave it exactly so. */
let state: unknown;

async function databaseState(db: Db) {
  return { counts: await countAll(db), account: await snapshotAccount(db, acct.accountId) };
}

before(async () => {
  acct = await inDb(() => createTestAccount('CLI errors'));
  validFile = tempFile(
    'ok.ndjson',
    `${JSON.stringify({
      type: 'conversation',
      conversation_id: randomUUID(),
      title: 't',
      status: 'Open',
      channel_id: 1_999_999_000,
      channel_name: 'c',
      created_at: '2026-01-01 10:00:00',
      updated_at: '2026-01-01 10:00:00',
    })}\n`,
  );
  state = await inDb(databaseState);
});

/** `db`: the command gets as far as the database (the others fail on their arguments alone). */
type Case = { name: string; args: () => string[]; stderr: RegExp; db?: true };
const email = () => `new-${randomUUID()}@example.test`;
const acctId = () => String(acct.accountId);
const UNKNOWN_ACCOUNT = '2147480000';

const CASES: Case[] = [
  // account create
  { name: 'account create without --name', args: () => ['account', 'create', '--admin-email', email(), '--admin-password', PASSWORD], stderr: /--name/ },
  {
    name: 'account create with an empty --name',
    args: () => ['account', 'create', '--name', '', '--admin-email', email(), '--admin-password', PASSWORD],
    stderr: /name/,
  },
  {
    name: 'account create with a blank --name',
    args: () => ['account', 'create', '--name', '   ', '--admin-email', email(), '--admin-password', PASSWORD],
    stderr: /name/,
  },
  { name: 'account create without --admin-email', args: () => ['account', 'create', '--name', 'N', '--admin-password', PASSWORD], stderr: /--admin-email/ },
  { name: 'account create without --admin-password', args: () => ['account', 'create', '--name', 'N', '--admin-email', email()], stderr: /--admin-password/ },
  {
    name: 'account create with a bad email',
    args: () => ['account', 'create', '--name', 'N', '--admin-email', 'not-an-email', '--admin-password', PASSWORD],
    stderr: /admin-email/,
  },
  {
    name: 'account create with a 7-character password',
    args: () => ['account', 'create', '--name', 'N', '--admin-email', email(), '--admin-password', 'short12'],
    stderr: /admin-password.*8/,
  },
  {
    name: 'account create with an existing admin email (account must not remain)',
    args: () => ['account', 'create', '--name', `Dup ${randomUUID()}`, '--admin-email', acct.email, '--admin-password', PASSWORD],
    stderr: /already exists/,
    db: true,
  },
  {
    name: 'account create with a positional argument',
    args: () => ['account', 'create', 'extra', '--name', 'N', '--admin-email', email(), '--admin-password', PASSWORD],
    stderr: /extra|argument/i,
  },
  {
    name: 'account create with an unknown flag',
    args: () => ['account', 'create', '--name', 'N', '--admin-email', email(), '--admin-password', PASSWORD, '--plan', 'gold'],
    stderr: /--plan/,
  },
  // apikey create
  { name: 'apikey create without --account', args: () => ['apikey', 'create', '--name', 'k'], stderr: /--account/ },
  { name: 'apikey create with a non-numeric account', args: () => ['apikey', 'create', '--account', 'abc'], stderr: /account/ },
  { name: 'apikey create with account 0', args: () => ['apikey', 'create', '--account', '0'], stderr: /account/ },
  { name: 'apikey create with a negative account', args: () => ['apikey', 'create', '--account=-3'], stderr: /account/ },
  { name: 'apikey create with a fractional account', args: () => ['apikey', 'create', '--account', '1.5'], stderr: /account/ },
  {
    name: 'apikey create with an unknown account',
    args: () => ['apikey', 'create', '--account', UNKNOWN_ACCOUNT],
    stderr: new RegExp(UNKNOWN_ACCOUNT),
    db: true,
  },
  { name: 'apikey create with --env prod', args: () => ['apikey', 'create', '--account', acctId(), '--env', 'prod'], stderr: /env.*(live|test)/ },
  { name: 'apikey create with an empty --name', args: () => ['apikey', 'create', '--account', acctId(), '--name', ''], stderr: /name/ },
  { name: 'apikey create with an unknown flag', args: () => ['apikey', 'create', '--account', acctId(), '--bogus'], stderr: /--bogus/ },
  // apikey revoke
  { name: 'apikey revoke without --key-id', args: () => ['apikey', 'revoke'], stderr: /--key-id/ },
  { name: 'apikey revoke with a malformed key id', args: () => ['apikey', 'revoke', '--key-id', 'no!'], stderr: /key-id/ },
  { name: 'apikey revoke with an unknown key id', args: () => ['apikey', 'revoke', '--key-id', 'AAAAAAAAAAAAAAAA'], stderr: /AAAAAAAAAAAAAAAA/, db: true },
  // user create
  { name: 'user create without --email', args: () => ['user', 'create', '--account', acctId(), '--password', PASSWORD], stderr: /--email/ },
  { name: 'user create with a bad email', args: () => ['user', 'create', '--account', acctId(), '--email', 'a@', '--password', PASSWORD], stderr: /email/ },
  {
    name: 'user create with a short password',
    args: () => ['user', 'create', '--account', acctId(), '--email', email(), '--password', 'short'],
    stderr: /password.*8/,
  },
  {
    name: 'user create for an unknown account',
    args: () => ['user', 'create', '--account', UNKNOWN_ACCOUNT, '--email', email(), '--password', PASSWORD],
    stderr: new RegExp(UNKNOWN_ACCOUNT),
    db: true,
  },
  {
    name: 'user create for a non-numeric account',
    args: () => ['user', 'create', '--account', 'x1', '--email', email(), '--password', PASSWORD],
    stderr: /account/,
  },
  {
    name: 'user create with an existing admin email',
    args: () => ['user', 'create', '--account', acctId(), '--email', acct.email, '--password', PASSWORD],
    stderr: /already exists/,
    db: true,
  },
  // import
  { name: 'import without --file', args: () => ['import', '--account', acctId()], stderr: /--file/ },
  { name: 'import without --account', args: () => ['import', '--file', validFile], stderr: /--account/ },
  { name: 'import with a non-numeric account', args: () => ['import', '--account', 'abc', '--file', validFile], stderr: /account/ },
  {
    name: 'import into an unknown account',
    args: () => ['import', '--account', UNKNOWN_ACCOUNT, '--file', validFile],
    stderr: new RegExp(UNKNOWN_ACCOUNT),
    db: true,
  },
  {
    name: 'import of a missing file',
    args: () => ['import', '--account', acctId(), '--file', '/nonexistent/dir/x.ndjson'],
    stderr: /\/nonexistent\/dir\/x\.ndjson/,
  },
  // seed and unknown commands
  { name: 'seed without --demo', args: () => ['seed'], stderr: /--demo/ },
  { name: 'an unknown command', args: () => ['frobnicate'], stderr: /unknown command/i },
  { name: 'an unknown sub-command', args: () => ['account', 'rename', '--name', 'x'], stderr: /unknown command/i },
  { name: 'no command at all', args: () => [], stderr: /command|usage/i },
];

async function assertFailed(c: Case, r: CliResult) {
  assert.notEqual(r.code, 0, `exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout, '', 'stdout');
  assert.ok(r.stderr.trim() !== '', 'a message on stderr');
  assert.doesNotMatch(r.stderr, /in use by process/, 'fails on its own, not on the database lock');
  assert.match(r.stderr, c.stderr);
}

function assertOneLine(r: CliResult) {
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got ${lines.length}: ${JSON.stringify(r.stderr)}`);
}

/** After a failure the database equals the state before it; the next case compares against this one. */
function assertUnchanged(now: unknown) {
  const expected = state;
  state = now;
  assert.deepEqual(now, expected, 'nothing written');
}

describe('CLI argument errors: non-zero exit, one stderr line, empty stdout, nothing written', () => {
  // This process keeps the database open: under PGlite a CLI that touched it would fail on the lock.
  after(async () => {
    if (testDbKind === 'pglite') await closeDatabase();
  });
  for (const c of CASES.filter((x) => !x.db)) {
    it(c.name, async () => {
      const r = await runCli(c.args());
      await assertFailed(c, r);
      assertUnchanged(await databaseState(await getDb()));
      assertOneLine(r);
    });
  }
});

describe('CLI errors found in the database: non-zero exit, one stderr line, empty stdout, nothing written', () => {
  for (const c of CASES.filter((x) => x.db)) {
    it(c.name, async () => {
      const r = await runCli(c.args());
      await assertFailed(c, r);
      assertUnchanged(await inDb(databaseState));
      assertOneLine(r);
    });
  }
});
