/**
 * A CLI command that changes a cached thing (an API key revoked, a widget track moved) tells every
 * running instance through Redis pub/sub (docs/contracts.md §9). The CLI's Redis connection is brand new
 * when it publishes; the message must not be dropped while it connects.
 *
 * Needs DATABASE_URL and REDIS_URL (scripts/test.mjs's multi step sets both).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { parseSuccess, runCli } from '../helpers/cli';

const ready = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const PREFIX = `${process.env.REDIS_PREFIX ?? 'svc-test:'}cli-inval-${process.pid}-${Date.now()}:`;

describe('CLI invalidations over Redis', { skip: !ready && 'needs DATABASE_URL and REDIS_URL' }, () => {
  const sub = ready ? new Redis(process.env.REDIS_URL!, { lazyConnect: true }) : undefined;
  after(async () => {
    await sub?.quit().catch(() => {});
  });

  it('apikey revoke publishes the key id on the invalidation channel', { timeout: 60_000 }, async () => {
    const env = { DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL, REDIS_PREFIX: PREFIX, SVC_DEMO: '0' };
    const account = parseSuccess(
      await runCli(['account', 'create', '--name', 'Inval', '--admin-email', `inval-${Date.now()}@example.com`, '--admin-password', 'a-long-password-1'], env),
    );
    const key = parseSuccess(await runCli(['apikey', 'create', '--account', String(account.account_id)], env));

    await sub!.connect();
    const messages: Array<{ topic: string; id: string }> = [];
    sub!.on('message', (_ch: string, raw: string) => messages.push(JSON.parse(raw)));
    await sub!.subscribe(`${PREFIX}invalidate`);

    const revoked = parseSuccess(await runCli(['apikey', 'revoke', '--key-id', String(key.key_id)], env));
    assert.equal(revoked.revoked, true);
    const deadline = Date.now() + 2000;
    while (!messages.some((m) => m.topic === 'api-key' && m.id === key.key_id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(
      messages.some((m) => m.topic === 'api-key' && m.id === key.key_id),
      `no invalidation for ${key.key_id}; got ${JSON.stringify(messages)}`,
    );
  });
});
