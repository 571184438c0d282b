/**
 * Channel ids belong to their account (docs/contracts.md §3, changed): two accounts each keep a channel 7,
 * neither sees or renames the other's, and the migration from service-wide ids loses nothing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, migrationsFolder, rows } from '../../db/client';
import { allocateChannelIds, insertChannel } from '../../db/queries/channels';
import { api, conversationLine, createTestAccount, importLines, responseLine, type TestAccount } from '../helpers/builders';
import { migrationIndex, openScratchDatabase, partialMigrations } from '../helpers/migrations';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
let a: TestAccount;
let b: TestAccount;
before(async () => {
  server = await startTestServer();
  a = await createTestAccount('Alpha');
  b = await createTestAccount('Beta');
});
after(async () => {
  await server?.close();
});

describe('two accounts with the same channel numbers', () => {
  const convA = conversationLine({ channel_id: 7, channel_name: 'Alpha web' });
  const convB = conversationLine({ channel_id: 7, channel_name: 'Beta shop' });
  const respA = responseLine(convA, { question: 'alpha question' });
  const respB1 = responseLine(convB, { question: 'beta question 1' });
  const respB2 = responseLine(convB, { question: 'beta question 2' });

  it('imports channel 7 into both accounts', async () => {
    assert.deepEqual(await importLines(a.accountId, [convA, respA]), { conversations: 1, responses: 1 });
    assert.deepEqual(await importLines(b.accountId, [convB, respB1, respB2]), { conversations: 1, responses: 2 });
  });

  it('each account lists only its own channel 7, with its own name and counts', async () => {
    const ga = await api(server.url, a.key)('/customer-api/v2/conversation?channel_id=7');
    const gb = await api(server.url, b.key)('/customer-api/v2/conversation?channel_id=7');
    assert.equal(ga.status, 200);
    assert.deepEqual(
      ga.body.results.map((r: { conversation_id: string; channel_name: string; response_count: number }) => [
        r.conversation_id,
        r.channel_name,
        r.response_count,
      ]),
      [[convA.conversation_id, 'Alpha web', 1]],
    );
    assert.deepEqual(
      gb.body.results.map((r: { conversation_id: string; channel_name: string; response_count: number }) => [
        r.conversation_id,
        r.channel_name,
        r.response_count,
      ]),
      [[convB.conversation_id, 'Beta shop', 2]],
    );
    const ra = await api(server.url, a.key)('/customer-api/v2/response?channel_id=7');
    const rb = await api(server.url, b.key)('/customer-api/v2/response?channel_id=7');
    assert.equal(ra.body.count, 1);
    assert.equal(rb.body.count, 2);
  });

  it("renaming channel 7 in one account leaves the other's name alone", async () => {
    await importLines(a.accountId, [{ ...convA, channel_name: 'Alpha renamed' }]);
    const ga = await api(server.url, a.key)(`/customer-api/v2/conversation/${convA.conversation_id}`);
    const gb = await api(server.url, b.key)(`/customer-api/v2/conversation/${convB.conversation_id}`);
    assert.equal(ga.body.channel_name, 'Alpha renamed');
    assert.equal(gb.body.channel_name, 'Beta shop');
  });

  it('channel counters stay per account', async () => {
    const counts = await rows<{ account_id: number; conversation_count: number; response_count: number }>(
      await getDb(),
      sql`
      SELECT account_id, conversation_count, response_count FROM channels WHERE id = 7 AND account_id IN (${a.accountId}, ${b.accountId}) ORDER BY account_id`,
    );
    assert.deepEqual(
      counts.map((c) => [c.account_id, c.conversation_count, c.response_count]),
      [
        [a.accountId, 1, 1],
        [b.accountId, 1, 2],
      ],
    );
  });

  it('a conversation id of another account is still an error', async () => {
    await assert.rejects(importLines(a.accountId, [{ ...convB, title: 'Hijack' }]), /line 1\b.*conversation_id.*another account/s);
  });

  it("new channels take the account's next free number, also under concurrency", async () => {
    const fresh = await createTestAccount('Gamma');
    const db = await getDb();
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => insertChannel(db, fresh.accountId, `c${i}`)));
    assert.deepEqual(
      [...ids].sort((x, y) => x - y),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.deepEqual(await allocateChannelIds(db, fresh.accountId, 2), [9, 10]);
  });
});

describe('migrating service-wide channel ids to per-account ids', () => {
  it('keeps every channel, conversation, response and widget client, and their links', async () => {
    const before = partialMigrations(migrationIndex('_channels_per_account'));
    const { exec, migrateTo, close } = await openScratchDatabase(server.kind);
    try {
      await migrateTo(before);
      const c1 = randomUUID();
      const c2 = randomUUID();
      const r1 = randomUUID();
      const r2 = randomUUID();
      await exec(`INSERT INTO accounts (id, name) VALUES (1, 'One'), (2, 'Two')`);
      await exec(`INSERT INTO channels (id, account_id, name, conversation_count, response_count) VALUES (7, 1, 'Seven', 1, 1), (1000000, 2, 'Widget', 1, 1)`);
      await exec(`INSERT INTO conversations (id, account_id, channel_id, title, status, response_count, created_at, updated_at)
        VALUES ('${c1}', 1, 7, 'first', 'Open', 1, now(), now()), ('${c2}', 2, 1000000, 'second', 'Closed', 1, now(), now())`);
      await exec(`INSERT INTO responses (id, account_id, conversation_id, channel_id, question, answer, created_at)
        VALUES ('${r1}', 1, '${c1}', 7, 'q1', 'a1', now()), ('${r2}', 2, '${c2}', 1000000, 'q2', 'a2', now())`);
      await exec(`INSERT INTO widget_clients (id, account_id, secret_hash, domains, channel_id) VALUES ('wc_x', 2, '\\x00', ARRAY['a.example'], 1000000)`);
      const snapshot = async () => ({
        channels: await exec(`SELECT account_id, id, name, conversation_count, response_count FROM channels ORDER BY account_id, id`),
        conversations: await exec(`SELECT id, account_id, channel_id, title, response_count FROM conversations ORDER BY id`),
        responses: await exec(`SELECT id, account_id, conversation_id, channel_id, question FROM responses ORDER BY id`),
        clients: await exec(`SELECT id, account_id, channel_id FROM widget_clients ORDER BY id`),
      });
      const old = await snapshot();

      await migrateTo(migrationsFolder());

      assert.deepEqual(await snapshot(), old, 'no row changed or went missing');
      // The new key: account 1 can now have its own channel 1000000, and a dangling pair is refused.
      await exec(`INSERT INTO channels (id, account_id, name) VALUES (1000000, 1, 'Mine too')`);
      await assert.rejects(
        exec(`INSERT INTO conversations (id, account_id, channel_id, title, status, created_at, updated_at)
        VALUES ('${randomUUID()}', 2, 7, 'x', 'Open', now(), now())`),
        /foreign key|violates/i,
      );
    } finally {
      await close();
      fs.rmSync(before, { recursive: true, force: true });
    }
  });
});
