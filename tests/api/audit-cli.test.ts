/** CLI `audit list` (docs/contracts.md §18): the CLI's own changes are logged as `cli`; bad input is a clear error. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { parseSuccess, runCli, useCliDatabase } from '../helpers/cli';

const cliDb = useCliDatabase();
after(() => cliDb.cleanup());

describe('CLI: audit list', () => {
  it("lists the account's entries newest first in the contract's shape, limited by --limit", async () => {
    const email = `a-${randomUUID()}@example.test`;
    const account = String(
      parseSuccess(await runCli(['account', 'create', '--name', 'Audit CLI Co', '--admin-email', email, '--admin-password', 'long enough pw'])).account_id,
    );
    const key = parseSuccess(await runCli(['apikey', 'create', '--account', account, '--name', 'ci']));
    parseSuccess(await runCli(['apikey', 'revoke', '--key-id', String(key.key_id)]));
    const all = parseSuccess(await runCli(['audit', 'list', '--account', account])) as { entries: Array<Record<string, unknown>> };
    assert.deepEqual(
      all.entries.map(({ at: _at, ...e }) => e),
      [
        { actor: 'cli', action: 'api_key.revoked', target: `${key.key_id} (ci)`, ip: null },
        { actor: 'cli', action: 'api_key.created', target: `${key.key_id} (ci)`, ip: null },
      ],
    );
    assert.deepEqual(Object.keys(all.entries[0]!), ['at', 'actor', 'action', 'target', 'ip']);
    assert.match(String(all.entries[0]!.at), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const one = parseSuccess(await runCli(['audit', 'list', '--account', account, '--limit', '1'])) as { entries: unknown[] };
    assert.equal(one.entries.length, 1);
  });

  it('refuses bad input with one clear line', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['audit', 'list'], /^error: missing --account/],
      [['audit', 'list', '--account', 'abc'], /^error: account: /],
      [['audit', 'list', '--account', '1', '--limit', '0'], /^error: limit: must be 1–1000$/],
      [['audit', 'list', '--account', '1', '--limit', '5000'], /^error: limit: must be 1–1000$/],
      [['audit', 'list', '--account', '1', '--limit', 'many'], /^error: limit: /],
      [['audit', 'list', '--account', '2147483000'], /^error: No account with id 2147483000\.$/],
      [['audit', 'list', '--account', '1', '--edit'], /^error: Unknown option '--edit'/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(args);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.equal(r.stdout, '');
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(lines[0]!, message, args.join(' '));
    }
  });
});
