/**
 * Webhook CLI commands (docs/contracts.md §2, §11) and the SSRF guard without WEBHOOK_ALLOW_PRIVATE_NETWORKS:
 * refused at creation (IP literals, metadata, a name that resolves to loopback) and at delivery
 * (an endpoint stored while allowed is refused by a worker that is not).
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { PRIVATE_REFUSED } from '../../lib/net/address';
import { inDb, parseSuccess, runCli, useCliDatabase } from '../helpers/cli';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { eventually } from '../helpers/widget';

const cliDb = useCliDatabase();
after(() => cliDb.cleanup());
delete process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
delete process.env.OUTBOUND_ALLOW_PRIVATE_NETWORKS;

let shared: string | undefined;
async function account() {
  if (shared) return shared;
  const out = parseSuccess(
    await runCli(['account', 'create', '--name', 'Hooks Co', '--admin-email', `a-${randomUUID()}@example.test`, '--admin-password', 'long enough pw']),
  );
  shared = String(out.account_id);
  return shared;
}

/** Fails unless the CLI exits non-zero with exactly one stderr line matching `message` and prints nothing. */
async function refused(args: string[], message: RegExp | string, env: Record<string, string> = {}) {
  const r = await runCli(args, env);
  assert.notEqual(r.code, 0, `${args.join(' ')} should fail`);
  assert.equal(r.stdout, '', 'nothing on stdout');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one stderr line, got ${JSON.stringify(r.stderr)}`);
  if (typeof message === 'string') assert.equal(lines[0], message);
  else assert.match(lines[0]!, message);
}

describe('CLI: webhook create, list, delete', () => {
  it('creates (secret once, all types by default), lists without secrets, deletes', async () => {
    const acct = await account();
    const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' };
    const all = parseSuccess(await runCli(['webhook', 'create', '--account', acct, '--url', 'http://127.0.0.1:9/a'], env));
    assert.deepEqual(Object.keys(all), ['endpoint_id', 'url', 'events', 'secret']);
    assert.deepEqual(all.events, [
      'conversation.created',
      'response.created',
      'response.feedback',
      'conversation.status_changed',
      'message.created',
      'csat.submitted',
      'conversation.deleted',
    ]);
    assert.match(String(all.secret), /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.doesNotThrow(() => new Webhook(String(all.secret)), 'the library accepts the secret');
    const one = parseSuccess(
      await runCli([
        'webhook',
        'create',
        '--account',
        acct,
        '--url',
        'https://93.184.215.14/hook?x=1',
        '--event',
        'response.feedback',
        '--event',
        'response.created',
      ]),
    );
    assert.deepEqual(one.events, ['response.created', 'response.feedback']);
    assert.equal(one.url, 'https://93.184.215.14/hook?x=1');

    const listed = parseSuccess(await runCli(['webhook', 'list', '--account', acct]));
    const endpoints = listed.endpoints as Array<Record<string, unknown>>;
    assert.deepEqual(
      endpoints.map((e) => e.endpoint_id),
      [all.endpoint_id, one.endpoint_id],
    );
    assert.ok(!JSON.stringify(listed).includes('whsec_'), 'no secret in the list');
    assert.deepEqual(
      endpoints.map((e) => e.status),
      ['active', 'active'],
    );

    const other = parseSuccess(
      await runCli(['account', 'create', '--name', 'Other Co', '--admin-email', `o-${randomUUID()}@example.test`, '--admin-password', 'long enough pw']),
    );
    assert.deepEqual(
      parseSuccess(await runCli(['webhook', 'list', '--account', String(other.account_id)])),
      { endpoints: [] },
      "another account's list is its own",
    );
    assert.deepEqual(parseSuccess(await runCli(['webhook', 'delete', '--endpoint-id', String(one.endpoint_id)])), {
      endpoint_id: one.endpoint_id,
      deleted: true,
    });
    await refused(['webhook', 'delete', '--endpoint-id', String(one.endpoint_id)], `error: No webhook endpoint with id ${one.endpoint_id}.`);
    assert.equal((parseSuccess(await runCli(['webhook', 'list', '--account', acct])).endpoints as unknown[]).length, 1);
  });

  it('bad input: precise one-line errors, nothing stored', async () => {
    const acct = await account();
    const table: Array<[string[], RegExp | string]> = [
      [['webhook', 'create', '--url', 'https://93.184.215.14/'], /^error: missing --account \(usage: .*webhook create --account ID --url URL/],
      [
        ['webhook', 'create', '--account', acct, '--url', 'https://93.184.215.14/', '--event', 'all'],
        'error: event: "all" is not an event type; use conversation.created, response.created, response.feedback, conversation.status_changed, message.created, csat.submitted, conversation.deleted',
      ],
      [
        ['webhook', 'create', '--account', acct, '--url', 'http://169.254.169.254/latest/meta-data/'],
        `error: url: 169.254.169.254 is a link-local address; ${PRIVATE_REFUSED}`,
      ],
      [['webhook', 'create', '--account', acct, '--url', 'https://93.184.215.14/', '--colour', 'red'], /^error: Unknown option '--colour'/],
      [['webhook', 'delete', '--endpoint-id', '12'], 'error: endpoint-id: must be an endpoint id (a UUID, as `webhook list` shows it)'],
    ];
    for (const [args, message] of table) await refused(args, message);
  });

  it('refuses loopback, private, link-local, metadata and CGNAT addresses, and names that resolve to them', async () => {
    // The same service the CLI calls, in this process (no WEBHOOK_ALLOW_PRIVATE_NETWORKS): refused before any write.
    const { createWebhookEndpoint } = await import('../../lib/webhooks/service');
    const cases: Array<[string, string]> = [
      ['http://127.0.0.1:8080/hook', '127.0.0.1 is a loopback address'],
      ['http://10.1.2.3/hook', '10.1.2.3 is a private address'],
      ['http://172.16.0.1/hook', '172.16.0.1 is a private address'],
      ['http://192.168.1.1/hook', '192.168.1.1 is a private address'],
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
      ['http://[fd00:ec2::254]/', 'fd00:ec2::254 is a private (unique local) address'],
      ['http://[::1]/', '::1 is a loopback address'],
      ['http://[::ffff:127.0.0.1]/', '127.0.0.1 is a loopback address'],
      ['http://[::ffff:a9fe:a9fe]/', '169.254.169.254 is a link-local address'],
      ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
      ['http://100.100.100.200/', '100.100.100.200 is a carrier-grade NAT address'],
      ['http://0.0.0.0/', '0.0.0.0 is an unspecified address'],
      ['http://[::]/', ':: is an unspecified address'],
      ['http://2130706433/', '127.0.0.1 is a loopback address'],
      ['http://0x7f.1/', '127.0.0.1 is a loopback address'],
    ];
    for (const [url, why] of cases) {
      await assert.rejects(createWebhookEndpoint(CLI, { accountId: 1, url }), { code: 'invalid_request', message: `url: ${why}; ${PRIVATE_REFUSED}` }, url);
    }
    await assert.rejects(createWebhookEndpoint(CLI, { accountId: 1, url: 'http://localhost:3000/hook' }), {
      code: 'invalid_request',
      message: `url: host localhost resolves to a refused address; ${PRIVATE_REFUSED}`,
    });
  });
});

describe('SSRF at delivery', () => {
  it('a worker without the allow flag refuses an endpoint on loopback stored earlier; the receiver gets nothing', async () => {
    const rx = await new WebhookReceiver().start();
    try {
      const acct = await account();
      const ep = parseSuccess(
        await runCli(['webhook', 'create', '--account', acct, '--url', rx.url, '--event', 'conversation.created'], { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' }),
      );
      const { importLines, conversationLine, newChannelIds } = await import('../helpers/builders');
      const { recordConversationCreated } = await import('../../lib/webhooks/events');
      const { startWebhookWorker, stopWebhookWorker } = await import('../../lib/webhooks/worker');
      const { listWebhookDeliveries } = await import('../../lib/webhooks/service');
      const { attemptDelivery } = await import('../../lib/webhooks/delivery');
      await inDb(async (db) => {
        const [ch] = await newChannelIds(1);
        const conv = conversationLine({ channel_id: ch! });
        await importLines(Number(acct), [conv]);
        const queued = await db.transaction((tx) => recordConversationCreated(tx as unknown as typeof db, Number(acct), conv.conversation_id));
        assert.ok(queued >= 1, 'queued for the endpoint');
        startWebhookWorker();
        try {
          const [d] = await eventually(
            () => listWebhookDeliveries(Number(acct), String(ep.endpoint_id)),
            (l) => (l[0]?.attempts ?? 0) >= 1,
            'an attempt',
          );
          assert.equal(d!.status, 'pending', 'a refused attempt is a failed attempt, retried later');
          assert.equal(d!.last_status_code, null);
          assert.equal(d!.last_error, `refused: 127.0.0.1 is a loopback address; ${PRIVATE_REFUSED}`);
        } finally {
          await stopWebhookWorker();
        }
      });
      const byName = await attemptDelivery(rx.url.replace('127.0.0.1', 'localhost'), 'msg_x', '{}', ['whsec_' + Buffer.alloc(32).toString('base64')]);
      assert.equal(byName.ok, false);
      assert.equal(byName.error, `refused: host localhost resolves to a refused address; ${PRIVATE_REFUSED}`, 'never what it resolved to');
      assert.equal(rx.received.length, 0, 'nothing reached the receiver');
    } finally {
      await rx.stop();
    }
  });
});
