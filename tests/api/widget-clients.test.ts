/** Widget clients: names (create, default, rename, migrated rows) and domains as pasted, through the service the dashboard and CLI use. */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { insertWidgetClient } from '../../db/queries/widget-clients';
import { AppError } from '../../lib/core/errors';
import { createWidgetClient, listClients, renameClient, setClientDomains } from '../../lib/widget-clients/service';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
before(
  async () => {
    server = await startTestServer();
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

const invalid = (pattern: RegExp) => (e: unknown) => e instanceof AppError && e.code === 'invalid_request' && pattern.test(e.message);

describe('widget client names', () => {
  it('is created with a name, or named after its first domain', async () => {
    const acct = await createTestAccount();
    const named = await createWidgetClient(CLI, { accountId: acct.accountId, name: '  Online shop ', domains: ['shop.example'] });
    const unnamed = await createWidgetClient(CLI, { accountId: acct.accountId, domains: ['https://docs.example/help', 'b.example'] });
    assert.equal(named.name, 'Online shop');
    assert.equal(unnamed.name, 'docs.example');
    const list = await listClients(acct.accountId);
    assert.deepEqual(
      list.map((c) => [c.id, c.name]),
      [
        [named.client_id, 'Online shop'],
        [unnamed.client_id, 'docs.example'],
      ],
    );
  });

  it('renames within the account only; an empty or long name is refused', async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const c = await createWidgetClient(CLI, { accountId: acct.accountId, domains: ['shop.example'] });
    assert.equal((await renameClient(CLI, acct.accountId, c.client_id, 'Help centre')).name, 'Help centre');
    assert.equal((await listClients(acct.accountId))[0]!.name, 'Help centre');
    await assert.rejects(renameClient(CLI, other.accountId, c.client_id, 'Stolen'), (e) => e instanceof AppError && e.code === 'not_found');
    await assert.rejects(renameClient(CLI, acct.accountId, c.client_id, '   '), invalid(/name: give the client a name/));
    await assert.rejects(renameClient(CLI, acct.accountId, c.client_id, 'x'.repeat(81)), invalid(/at most 80 characters/));
    assert.equal((await listClients(acct.accountId))[0]!.name, 'Help centre');
  });

  it('the migration names existing clients after their first domain', async () => {
    const acct = await createTestAccount();
    const { channel_id: channel } = await createWidgetClient(CLI, { accountId: acct.accountId, domains: ['new.example'] });
    const db = await getDb();
    const id = `wc_old${Date.now()}`;
    await insertWidgetClient(db, acct.accountId, {
      id,
      name: '',
      secretHash: new Uint8Array(32),
      domains: ['legacy.example', 'x.example'],
      channelId: channel,
    });
    const file = fs.readdirSync('db/migrations').find((f) => f.includes('dashwidget_client_names'))!;
    const update = fs
      .readFileSync(`db/migrations/${file}`, 'utf8')
      .split('--> statement-breakpoint')
      .map((s) => s.trim())
      .find((s) => /UPDATE "widget_clients"/.test(s))!;
    await db.execute(sql.raw(update));
    assert.equal((await listClients(acct.accountId)).find((c) => c.id === id)?.name, 'legacy.example');
  });
});

describe('widget client domains as pasted', () => {
  it('reduces URLs, ports and trailing dots to hosts, and removes duplicates', async () => {
    const acct = await createTestAccount();
    const c = await createWidgetClient(CLI, {
      accountId: acct.accountId,
      domains: ['https://shop.example/path', 'shop.example:8443', 'Shop.Example.', '*.example.org'],
    });
    assert.deepEqual(c.domains, ['shop.example', '*.example.org']);
    const updated = await setClientDomains(CLI, acct.accountId, c.client_id, ['http://localhost:3000/', '127.0.0.1:8080']);
    assert.deepEqual(updated.domains, ['localhost', '127.0.0.1']);
  });

  it('refuses what is not a domain with the reason, and keeps the old domains', async () => {
    const acct = await createTestAccount();
    const c = await createWidgetClient(CLI, { accountId: acct.accountId, domains: ['shop.example'] });
    await assert.rejects(
      setClientDomains(CLI, acct.accountId, c.client_id, ['not a domain!!']),
      invalid(/"not a domain!!" contains a space: give one domain per line/),
    );
    await assert.rejects(setClientDomains(CLI, acct.accountId, c.client_id, ['*.x']), invalid(/a wildcard needs a domain of two labels/));
    await assert.rejects(createWidgetClient(CLI, { accountId: acct.accountId, domains: ['domain!!'] }), invalid(/domain: "domain!!" is not a host name/));
    assert.deepEqual((await listClients(acct.accountId))[0]!.domains, ['shop.example']);
  });
});
