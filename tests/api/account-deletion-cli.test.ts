/**
 * `account delete --account ID --confirm NAME` through the real CLI process (docs/contracts.md §18): a
 * wrong name deletes nothing, the right one prints {"deleted": true, "account_id": N}; a deletion
 * killed mid-way (SIGKILL) is finished by the sweep once its lease lapses, and the other account
 * stays exactly as it was.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { rows, type Db } from '../../db/client';
import { startAccountDeletionSweep, stopAccountDeletionSweep } from '../../lib/privacy/account-deletion';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { inDb, parseSuccess, runCli, snapshotAccount, spawnCli, useCliDatabase } from '../helpers/cli';
import { eventually } from '../helpers/widget';

// Read once, at this process's first getEnv(); the CLI children inherit them.
process.env.ACCOUNT_DELETION_SWEEP_SECONDS = '0.1';
process.env.ACCOUNT_DELETION_LEASE_SECONDS = '1';
const cliDb = useCliDatabase();
after(() => cliDb.cleanup());

async function account(conversations: number) {
  const name = `Cli Delete ${randomUUID().slice(0, 8)}`;
  const acct = await createTestAccount(name);
  const [channel] = await newChannelIds(1);
  const convs = Array.from({ length: conversations }, () => conversationLine({ channel_id: channel! }));
  await importLines(
    acct.accountId,
    convs.flatMap((c) => [c, responseLine(c)]),
  );
  return { id: acct.accountId, name };
}

async function left(db: Db, accountId: number) {
  const [r] = await rows<{ accounts: number; conversations: number; responses: number; deleted: boolean | null }>(
    db,
    sql`SELECT (SELECT count(*)::int FROM accounts WHERE id = ${accountId}) AS accounts,
      (SELECT count(*)::int FROM conversations WHERE account_id = ${accountId}) AS conversations,
      (SELECT count(*)::int FROM responses WHERE account_id = ${accountId}) AS responses,
      (SELECT deleted_at IS NOT NULL FROM accounts WHERE id = ${accountId}) AS deleted`,
  );
  return r!;
}

describe('account delete (CLI)', () => {
  it('refuses a wrong name, a missing one and an unknown account with a clear error and deletes nothing; the right name deletes it all', async () => {
    const a = await inDb(() => account(3));
    const before = await inDb((db) => snapshotAccount(db, a.id));
    const wrong = await runCli(['account', 'delete', '--account', String(a.id), '--confirm', `${a.name}!`]);
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.equal(wrong.stdout, '');
    assert.match(wrong.stderr, /^error: The name typed does not match the account name; nothing was deleted\.\n$/);
    const missing = await runCli(['account', 'delete', '--account', String(a.id)]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing --confirm/);
    const unknown = await runCli(['account', 'delete', '--account', '2000000000', '--confirm', a.name]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /No account with id 2000000000/);
    assert.deepEqual(await inDb((db) => snapshotAccount(db, a.id)), before);

    assert.deepEqual(parseSuccess(await runCli(['account', 'delete', '--account', String(a.id), '--confirm', a.name])), {
      deleted: true,
      account_id: a.id,
    });
    assert.deepEqual(await inDb((db) => left(db, a.id)), { accounts: 0, conversations: 0, responses: 0, deleted: null });
  });

  it('a deletion killed mid-way (SIGKILL) is finished by the sweep; the other account is untouched', { timeout: 120_000 }, async () => {
    const [a, other] = await inDb(async () => [await account(150), await account(5)] as const);
    const kept = await inDb((db) => snapshotAccount(db, other.id));
    const child = spawnCli(['account', 'delete', '--account', String(a.id), '--confirm', a.name], { ACCOUNT_DELETION_BATCH: '3' });
    let stderr = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      // The responses are gone; the conversations go 3 a statement: kill it among them.
      if (/rows of responses/.test(stderr)) child.kill('SIGKILL');
    });
    assert.equal(await exited, 'SIGKILL', `the deletion ended by itself: ${stderr}`);
    const half = await inDb((db) => left(db, a.id));
    assert.equal(half.deleted, true, 'still marked deleted');
    assert.equal(half.responses, 0);
    assert.ok(half.conversations > 0, `killed among the conversations: ${JSON.stringify(half)}`);

    // This process's sweep takes it over once the dead CLI's lease (1 s) lapsed.
    await inDb(async (db) => {
      startAccountDeletionSweep();
      try {
        await eventually(
          () => left(db, a.id),
          (l) => l.accounts === 0,
          'the sweep to finish the deletion',
          30_000,
        );
      } finally {
        await stopAccountDeletionSweep();
      }
    });
    assert.deepEqual(await inDb((db) => left(db, a.id)), { accounts: 0, conversations: 0, responses: 0, deleted: null });
    assert.deepEqual(await inDb((db) => snapshotAccount(db, other.id)), kept);
  });
});
