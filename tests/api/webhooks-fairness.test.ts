/**
 * Fair delivery across accounts (docs/contracts.md §11, issue 23 item 2) on the real server: account A
 * has 8 endpoints at tarpits (accept the connection, never read or answer) and a backlog that keeps
 * growing; account B's one fast endpoint still gets each event within 2 s, because an account holds
 * at most its share of the instance's delivery slots and each claim takes every account's oldest
 * due delivery before any account's second.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectVisitor, createTestWidgetClient, sleep } from '../helpers/widget';
import { WebhookReceiver } from '../helpers/webhook-receiver';
import { createWebhookEndpoint } from '../../lib/webhooks/service';

const TIMEOUT_MS = 3000;
let server: TestServer;
const tarpits: net.Server[] = [];
const held: net.Socket[] = [];
let fast: WebhookReceiver;

before(
  async () => {
    server = await startTestServer({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_RETRY_BASE_MS: '50',
      TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
      SOCKET_EVENTS_PER_10S: '1000',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    for (const s of held) s.destroy();
    await Promise.all(tarpits.map((t) => new Promise((r) => t.close(r))));
    await fast?.stop().catch(() => {});
    await server?.close();
  },
  { timeout: 30_000 },
);

/** Accepts connections and never reads or answers: the sender's timeout is all that ends them. */
async function tarpit(): Promise<string> {
  const s = net.createServer((socket) => {
    socket.pause();
    held.push(socket);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  tarpits.push(s);
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`;
}

/** `n` conversation.created events for account A, one delivery per endpoint each (as the outbox writes them). */
async function backlog(accountId: number, n: number) {
  const { getDb } = await import('../../db/client');
  await (await getDb()).execute(sql`
    WITH ev AS (
      INSERT INTO webhook_events (id, account_id, type, conversation_id, body)
      SELECT 'msg_' || md5(random()::text || g::text), ${accountId}, 'conversation.created', gen_random_uuid(),
        '{"type":"conversation.created","timestamp":"2026-01-01T00:00:00.000Z","data":{}}'
      FROM generate_series(1, ${n}) g RETURNING id, seq, conversation_id
    )
    INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, conversation_id, event_seq)
    SELECT ${accountId}, ep.id, ev.id, ev.conversation_id, ev.seq FROM ev JOIN webhook_endpoints ep ON ep.account_id = ${accountId}`);
}

/** A's pending deliveries, and how many of them an instance is sending right now. */
async function pendingOf(accountId: number): Promise<{ pending: number; sending: number }> {
  const { getDb, rows } = await import('../../db/client');
  const [r] = await rows<{ pending: number; sending: number }>(
    await getDb(),
    sql`
    SELECT count(*)::int AS pending, (count(*) FILTER (WHERE lease_until > now()))::int AS sending
    FROM webhook_deliveries WHERE account_id = ${accountId} AND status = 'pending'`,
  );
  return r!;
}

describe('webhooks: one account cannot stall another', () => {
  it("8 tarpit endpoints and a growing backlog on account A; account B's deliveries stay under 2 s", { timeout: 60_000 }, async (t) => {
    const a = await createTestAccount('Tarpit Co');
    for (let i = 0; i < 8; i++) await createWebhookEndpoint(CLI, { accountId: a.accountId, url: await tarpit(), events: ['conversation.created'] });
    await backlog(a.accountId, 200);

    const b = await createTestAccount('Fast Co');
    fast = await new WebhookReceiver().start();
    await createWebhookEndpoint(CLI, { accountId: b.accountId, url: fast.url, events: ['conversation.created'] });
    const client = await createTestWidgetClient(b.accountId, ['example.com']);
    const v = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, 'https://example.com');
    t.after(() => v.close());

    await sleep(500); // A's deliveries now hold every slot A may take
    const backlogBefore = (await pendingOf(a.accountId)).pending;
    const latencies: number[] = [];
    let mostSending = 0;
    for (let i = 0; i < 8; i++) {
      mostSending = Math.max(mostSending, (await pendingOf(a.accountId)).sending);
      await backlog(a.accountId, 25); // A's backlog keeps growing while B asks
      const asked = Date.now();
      await v.ok('ask', { client_message_id: `m-${i}`, text: `Question ${i}?` });
      const [got] = (await fast.until((r) => r.length >= i + 1, `B's event ${i}`, 40_000)).slice(i);
      latencies.push(got!.at - asked);
      await sleep(500);
    }
    const backlogAfter = (await pendingOf(a.accountId)).pending;
    console.log(
      `B's delivery latency (ms): ${latencies.join(', ')}; A's pending deliveries ${backlogBefore} → ${backlogAfter}; ` +
        `A's deliveries in flight at most ${mostSending}; connections A's tarpits accepted: ${held.length}`,
    );
    assert.ok(held.length >= 8, `A's tarpits were being sent to (${held.length} connections)`);
    assert.ok(mostSending >= 1 && mostSending <= 8, `A held at most its share of 8 slots (${mostSending})`);
    assert.ok(backlogAfter > backlogBefore, `A's backlog grew (${backlogBefore} → ${backlogAfter})`);
    assert.ok(Math.max(...latencies) < 2000, `every delivery to B within 2 s (got ${latencies.join(', ')} ms)`);
  });
});
