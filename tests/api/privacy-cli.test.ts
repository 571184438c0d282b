/**
 * The lifecycle's CLI commands (docs/contracts.md §18): `retention set`, `privacy erase`,
 * `privacy export`, their bad input, and (PostgreSQL: a second process shares the database) an erasure
 * killed mid-batch by SIGKILL leaves every conversation whole, and the next run deletes them all.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { rows } from '../../db/client';
import { conversationLine, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { inDb, parseSuccess, runCli, spawnCli, testDbKind, useCliDatabase } from '../helpers/cli';

const cliDb = useCliDatabase();
after(() => cliDb.cleanup());

let shared: string | undefined;
async function account(): Promise<string> {
  if (shared) return shared;
  const out = parseSuccess(
    await runCli(['account', 'create', '--name', 'Privacy CLI', '--admin-email', `a-${randomUUID()}@example.test`, '--admin-password', 'long enough pw']),
  );
  shared = String(out.account_id);
  return shared;
}

/** `n` conversations of the visitor with two responses each (through the importer, in this process). */
async function visitorConversations(accountId: number, visitorId: string, email: string | null, n: number): Promise<string[]> {
  const [ch] = await newChannelIds(1);
  const lines: object[] = [];
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const c = conversationLine({ channel_id: ch! });
    lines.push(c, responseLine(c), responseLine(c));
    ids.push(c.conversation_id);
  }
  await inDb(async (db) => {
    await importLines(accountId, lines);
    await db.execute(sql`UPDATE conversations SET visitor_id = ${visitorId}, visitor_email = ${email} WHERE id = ANY(${`{${ids.join(',')}}`}::uuid[])`);
  });
  return ids;
}

async function refused(args: string[], code: number, message: string | RegExp) {
  const r = await runCli(args);
  assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code}, stderr ${r.stderr}`);
  assert.equal(r.stdout, '');
  const line = r.stderr.trim();
  assert.equal(line.split('\n').length, 1, r.stderr);
  if (typeof message === 'string') assert.equal(line, message);
  else assert.match(line, message);
}

describe('CLI: retention set', () => {
  it('sets days, turns off, and refuses what is not 1–3650 or off', async () => {
    const acct = await account();
    assert.deepEqual(parseSuccess(await runCli(['retention', 'set', '--account', acct, '--days', '30'])), { days: 30 });
    assert.deepEqual(parseSuccess(await runCli(['retention', 'set', '--account', acct, '--days', 'off'])), { days: null });
    for (const days of ['0', '3651', 'forever', '1.5']) {
      await refused(['retention', 'set', '--account', acct, '--days', days], 1, /^error: days: must be a whole number of days from 1 to 3650/);
    }
    await refused(['retention', 'set', '--account', acct], 2, 'error: missing --days (usage: npm run --silent cli -- retention set --account ID --days N|off)');
    await refused(['retention', 'set', '--account', '999999999', '--days', '3'], 1, 'error: No account with id 999999999.');
  });
});

describe('CLI: privacy erase and export', () => {
  it('exports the same JSON the page downloads, then erases; an unknown visitor says so', async () => {
    const acct = await account();
    const ids = await visitorConversations(Number(acct), 'cli-visitor', 'cli@example.test', 3);
    const exported = parseSuccess(await runCli(['privacy', 'export', '--account', acct, '--email', 'cli@example.test'])) as {
      visitor: unknown;
      conversations: Array<{ id: string; messages: unknown[] }>;
    };
    assert.deepEqual(exported.visitor, { email: 'cli@example.test', visitor_ids: ['cli-visitor'] });
    assert.deepEqual(exported.conversations.map((c) => c.id).sort(), [...ids].sort());
    assert.ok(exported.conversations.every((c) => c.messages.length === 4));
    assert.deepEqual(parseSuccess(await runCli(['privacy', 'erase', '--account', acct, '--visitor', 'cli-visitor'])), {
      conversations: 3,
      responses: 6,
      uploads: 0,
    });
    await refused(['privacy', 'erase', '--account', acct, '--visitor', 'cli-visitor'], 1, 'error: No conversations found for visitor id cli-visitor.');
    await refused(['privacy', 'export', '--account', acct, '--email', 'cli@example.test'], 1, 'error: No conversations found for email cli@example.test.');
  });

  it('bad input: both or neither of --email and --visitor, a malformed email', async () => {
    const acct = await account();
    const usage = '(usage: npm run --silent cli -- privacy erase --account ID (--email EMAIL | --visitor VISITOR_ID))';
    await refused(['privacy', 'erase', '--account', acct], 2, `error: give exactly one of --email and --visitor ${usage}`);
    await refused(
      ['privacy', 'erase', '--account', acct, '--email', 'a@b.test', '--visitor', 'x'],
      2,
      `error: give exactly one of --email and --visitor ${usage}`,
    );
    await refused(['privacy', 'erase', '--account', acct, '--email', 'nope'], 1, 'error: email: must be an email address');
  });
});

describe('CLI: an erasure killed mid-batch', {
  skip: testDbKind === 'pglite' ? 'PGlite is single-process: another process cannot hold a lock on it' : false,
}, () => {
  it('SIGKILL while its batch waits inside its transaction: every conversation whole; the next run erases them all', async () => {
    const acct = await account();
    const ids = await visitorConversations(Number(acct), 'kill-visitor', null, 20);
    const count = async () => {
      const [r] = await inDb((db) =>
        rows<{ c: number; r: number }>(
          db,
          sql`SELECT (SELECT count(*)::int FROM conversations WHERE id = ANY(${`{${ids.join(',')}}`}::uuid[])) AS c,
            (SELECT count(*)::int FROM responses WHERE conversation_id = ANY(${`{${ids.join(',')}}`}::uuid[])) AS r`,
        ),
      );
      return r!;
    };
    // Hold the account's row: the batch's statement deletes its rows, then waits to lower the account's counters.
    const holder = postgres(process.env.DATABASE_URL!, { max: 2 });
    const reserved = await holder.reserve();
    await reserved`BEGIN`;
    await reserved`SELECT id FROM accounts WHERE id = ${Number(acct)} FOR UPDATE`;
    const child = spawnCli(['privacy', 'erase', '--account', acct, '--visitor', 'kill-visitor']);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      for (let i = 0; ; i++) {
        const waiting =
          await holder`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%SELECT id, channel_id FROM conversations WHERE account_id%'`;
        if (waiting[0]!.n > 0) break;
        if (i >= 1200) {
          const seen =
            await holder`SELECT state, wait_event_type, wait_event, left(query, 120) AS q FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
          assert.fail(`the batch never reached its lock: ${JSON.stringify(seen)}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      child.kill('SIGKILL');
      await exited;
    } finally {
      await reserved`ROLLBACK`;
      reserved.release();
    }
    // The server ends the killed backend's transaction (rolled back) once it notices the socket closed.
    for (let i = 0; ; i++) {
      const left =
        await holder`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%SELECT id, channel_id FROM conversations WHERE account_id%' AND state <> 'idle' AND pid <> pg_backend_pid()`;
      if (left[0]!.n === 0) break;
      assert.ok(i < 200, 'the killed transaction ended');
      await new Promise((r) => setTimeout(r, 50));
    }
    await holder.end();
    assert.deepEqual(await count(), { c: 20, r: 40 }, 'nothing of the killed batch committed');
    assert.deepEqual(parseSuccess(await runCli(['privacy', 'erase', '--account', acct, '--visitor', 'kill-visitor'])), {
      conversations: 20,
      responses: 40,
      uploads: 0,
    });
    assert.deepEqual(await count(), { c: 0, r: 0 });
  });
});
