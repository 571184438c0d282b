import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recentSightings } from '../../lib/chat/sightings';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectOutcome, createTestWidgetClient, widgetSocket } from '../helpers/widget';

let server: TestServer;
before(async () => { server = await startTestServer({ SOCKET_EVENTS_PER_10S: '3' }); }, { timeout: 120_000 });
after(async () => { await server?.close(); }, { timeout: 30_000 });

const ORIGIN = 'https://shop.example.com';

async function connected(version?: string) {
  const acct = await createTestAccount();
  const client = await createTestWidgetClient(acct.accountId, ['shop.example.com']);
  const issued = await backendToken(server.url, client);
  const socket = widgetSocket(server.url, { origin: ORIGIN, auth: { token: issued.access_token, ...(version ? { version } : {}) } });
  assert.deepEqual(await connectOutcome(socket), { connected: true });
  return { acct, client, socket };
}

describe('widget socket limits and sightings', () => {
  it('caps the requests per socket: beyond SOCKET_EVENTS_PER_10S the ack says rate_limited', async () => {
    const { socket } = await connected();
    try {
      const acks: Array<{ ok: boolean; error?: { code: string } }> = [];
      for (let i = 0; i < 5; i++) {
        acks.push(await socket.timeout(5000).emitWithAck('history', { conversation_id: '00000000-0000-4000-8000-000000000000' }));
      }
      assert.deepEqual(acks.slice(0, 3).map((a) => a.error?.code), ['not_found', 'not_found', 'not_found']);
      assert.deepEqual(acks.slice(3).map((a) => a.error?.code), ['rate_limited', 'rate_limited']);
    } finally {
      socket.close();
    }
  });

  it('closes a connection that sends a message over 64 KiB', async () => {
    const { socket } = await connected();
    try {
      const closed = new Promise<string>((resolve) => socket.once('disconnect', (reason) => resolve(reason)));
      socket.emit('ask', { client_message_id: 'big', text: 'x'.repeat(70 * 1024) });
      const reason = await Promise.race([closed, new Promise<string>((r) => setTimeout(() => r('still connected'), 5000))]);
      assert.notEqual(reason, 'still connected');
    } finally {
      socket.close();
    }
  });

  it('records where the widget runs: origin and version, counted per day', async () => {
    const { acct, client, socket } = await connected('2.0.1');
    socket.close();
    const again = widgetSocket(server.url, { origin: ORIGIN, auth: { token: (await backendToken(server.url, client)).access_token, version: '2.0.1' } });
    assert.deepEqual(await connectOutcome(again), { connected: true });
    again.close();
    const seen = await recentSightings(acct.accountId, 30);
    assert.deepEqual(seen.map((s) => ({ client: s.client_id, origin: s.origin, version: s.widget_version, n: s.connections })),
      [{ client: client.client_id, origin: ORIGIN, version: '2.0.1', n: 2 }]);
  });
});
