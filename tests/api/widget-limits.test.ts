// One database: PostgreSQL — the socket's limits and caps are counted in the process
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getDb } from '../../db/client';
import { insertConversationEvent, listEventsAfter } from '../../db/queries/chat';
import { RESUME_PAGE } from '../../lib/chat/requests';
import { recentSightings } from '../../lib/chat/sightings';
import { deleteWidgetClient, setClientDomains } from '../../lib/widget-clients/service';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectOutcome, connectVisitor, createTestWidgetClient, expectRefused, tokenRequest, widgetSocket } from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({
      SOCKET_EVENTS_PER_10S: '3',
      WIDGET_SOCKETS_PER_ADDRESS: '8',
      WIDGET_SUBSCRIPTIONS_PER_SOCKET: '2',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

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
      assert.deepEqual(
        acks.slice(0, 3).map((a) => a.error?.code),
        ['not_found', 'not_found', 'not_found'],
      );
      assert.deepEqual(
        acks.slice(3).map((a) => a.error?.code),
        ['rate_limited', 'rate_limited'],
      );
    } finally {
      socket.close();
    }
  });

  it('asks are held by their own limits, not charged to the per-event budget', async () => {
    const { socket } = await connected();
    try {
      const asks: Array<{ ok: boolean; error?: { code: string } }> = [];
      let conversation_id: string | undefined;
      for (let i = 0; i < 4; i++) {
        const ack = await socket
          .timeout(10_000)
          .emitWithAck('ask', { client_message_id: `budget-${i}`, text: 'How long is the warranty?', ...(conversation_id ? { conversation_id } : {}) });
        conversation_id ??= ack.conversation_id;
        asks.push(ack);
      }
      assert.deepEqual(
        asks.map((a) => a.ok),
        [true, true, true, true],
        JSON.stringify(asks),
      );
      // The 3-per-10 s event budget is untouched by the four asks.
      const history = (await socket.timeout(5000).emitWithAck('history', { conversation_id: '00000000-0000-4000-8000-000000000000' })) as {
        error?: { code: string };
      };
      assert.equal(history.error?.code, 'not_found');
    } finally {
      socket.close();
    }
  });

  it('a visitor past ASKS_PER_MINUTE_PER_VISITOR is refused, in a burst too, and nothing of a refused ask is stored', async () => {
    // The limit check overlaps the reads of the conversation while the socket's last check left
    // room (lib/chat/socket.ts); a refusal must still win over every write. Socket A keeps room in
    // its own view while socket B, the same visitor, spends the budget: A's next ask overlaps and
    // is refused.
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example.com']);
    const token = (await backendToken(server.url, client)).access_token;
    const a = await connectVisitor(server.url, token, ORIGIN);
    const b = await connectVisitor(server.url, token, ORIGIN);
    try {
      const first = await a.ok('ask', { client_message_id: 'cap-0', text: 'How long is the warranty?' });
      const conversation_id = first.conversation_id as string;
      const limit = 20; // the default ASKS_PER_MINUTE_PER_VISITOR of this server
      for (let i = 1; i < 10; i++) await a.ok('ask', { conversation_id, client_message_id: `cap-${i}`, text: `Question ${i}?` });
      for (let i = 10; i < limit - 2; i++) await b.ok('ask', { conversation_id, client_message_id: `cap-${i}`, text: `Question ${i}?` });
      // On B: the last two allowed and three more at once.
      const burst = await Promise.all(
        [limit - 2, limit - 1, limit, limit + 1, limit + 2].map((i) =>
          b.request('ask', { conversation_id, client_message_id: `cap-${i}`, text: `Question ${i}?` }),
        ),
      );
      assert.deepEqual(
        burst.map((r) => (r.ok ? 'ok' : r.error.code)),
        ['ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited'],
        JSON.stringify(burst),
      );
      // On A, whose last check left room: its check overlaps the reads, and refuses.
      const overlapped = await a.request('ask', { conversation_id, client_message_id: 'cap-overlapped', text: 'One more?' });
      assert.equal(overlapped.ok ? 'ok' : overlapped.error.code, 'rate_limited');
      // Exactly the allowed questions are stored (the asks of a burst in any order: they are concurrent).
      const stored = await listEventsAfter(await getDb(), conversation_id, 0, 1000);
      const questions = stored.filter((e) => e.kind === 'question').map((e) => (e.payload as { client_message_id: string }).client_message_id);
      const byNumber = (x: string, y: string) => Number(x.slice(4)) - Number(y.slice(4));
      assert.deepEqual(
        questions.sort(byNumber),
        Array.from({ length: limit }, (_, i) => `cap-${i}`),
      );
    } finally {
      a.close();
      b.close();
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
    assert.deepEqual(
      seen.map((s) => ({ client: s.client_id, origin: s.origin, version: s.widget_version, n: s.connections })),
      [{ client: client.client_id, origin: ORIGIN, version: '2.0.1', n: 2 }],
    );
  });

  it('records versions that are not real widget releases as "other"', async () => {
    const { acct, client, socket } = await connected('9.9.9-evil');
    socket.close();
    const seen = await recentSightings(acct.accountId, 30);
    assert.deepEqual(
      seen.map((s) => ({ client: s.client_id, version: s.widget_version })),
      [{ client: client.client_id, version: 'other' }],
    );
  });
});

describe('hostile sockets: caps, pages and revocation', () => {
  it('caps the sockets per address (WIDGET_SOCKETS_PER_ADDRESS) with a clear refusal, and frees a slot on close', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example.com']);
    const token = (await backendToken(server.url, client)).access_token;
    const sockets = [];
    try {
      let refusal = '';
      for (let i = 0; i < 12 && !refusal; i++) {
        const s = widgetSocket(server.url, { origin: ORIGIN, auth: { token } });
        sockets.push(s);
        const outcome = await connectOutcome(s);
        if (!outcome.connected) refusal = outcome.message;
      }
      assert.match(refusal, /^too many connections from this address \(at most 8\)/);
      assert.equal(sockets.length, 9, 'eight accepted, the ninth refused');
      sockets[0]!.close();
      await new Promise((r) => setTimeout(r, 200));
      const again = widgetSocket(server.url, { origin: ORIGIN, auth: { token } });
      sockets.push(again);
      assert.deepEqual(await connectOutcome(again), { connected: true });
    } finally {
      for (const s of sockets) s.close();
    }
  });

  it('caps the conversations one socket follows (WIDGET_SUBSCRIPTIONS_PER_SOCKET)', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example.com']);
    const v = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, ORIGIN);
    try {
      await v.ok('ask', { client_message_id: 's-1', text: 'first conversation' });
      await v.ok('ask', { client_message_id: 's-2', text: 'second conversation' });
      const third = await v.request('ask', { client_message_id: 's-3', text: 'third conversation' });
      assert.equal(third.ok, false);
      assert.equal((third as { error: { code: string; message: string } }).error.code, 'rate_limited');
      assert.match((third as { error: { message: string } }).error.message, /at most 2 conversations/);
    } finally {
      v.close();
    }
  });

  it(`answers a resume in pages of ${RESUME_PAGE} events, never the whole backlog at once`, async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example.com']);
    const v = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, ORIGIN);
    try {
      const ack = await v.ok<{ conversation_id: string; response_id: string }>('ask', { client_message_id: 'p-1', text: 'anything' });
      await v.finished(ack.response_id);
      const db = await getDb();
      for (let i = 0; i < 250; i++) {
        await insertConversationEvent(db, ack.conversation_id, 'feedback', {
          type: 'feedback',
          conversation_id: ack.conversation_id,
          response_id: ack.response_id,
          likes: i,
          dislikes: 0,
        });
      }
      const before = v.events.length;
      const first = await v.ok<{ through_seq: number; more: boolean; last_seq: number }>('conversation:resume', {
        conversation_id: ack.conversation_id,
        last_seq: 0,
      });
      assert.equal(v.events.length - before, RESUME_PAGE);
      assert.equal(first.more, true);
      assert.equal(first.through_seq, RESUME_PAGE);
      const total = first.last_seq;
      const second = await v.ok<{ through_seq: number; more: boolean }>('conversation:resume', {
        conversation_id: ack.conversation_id,
        last_seq: first.through_seq,
      });
      assert.equal(second.more, false);
      assert.equal(second.through_seq, total);
      assert.deepEqual(
        v.events.slice(before).map((e) => e.seq),
        Array.from({ length: total }, (_, i) => i + 1),
      );
    } finally {
      v.close();
    }
  });

  it('disconnects open sockets at once when their domain is removed from the client', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example.com', 'other.example.com']);
    const v = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, ORIGIN);
    let revoked: { code?: string; message: string } | undefined;
    v.socket.on('session:revoked', (m: { code?: string; message: string }) => {
      revoked = m;
    });
    try {
      const started = Date.now();
      await setClientDomains(CLI, acct.accountId, client.client_id, ['other.example.com']);
      await v.until(() => v.disconnectReason !== undefined, 'the revocation disconnect', 2000);
      assert.ok(Date.now() - started < 1000, 'within a second');
      assert.equal(v.disconnectReason, 'io server disconnect');
      assert.match(revoked?.message ?? '', /^domain not allowed/);
      assert.equal(revoked?.code, 'domain_not_allowed');
    } finally {
      v.close();
    }
  });

  it('deleting a client disconnects its sockets at once, refuses its old tokens and keeps its conversations', async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['shop.example.com']);
    const token = (await backendToken(server.url, client)).access_token;
    const v = await connectVisitor(server.url, token, ORIGIN);
    let revoked: { code?: string; message: string } | undefined;
    v.socket.on('session:revoked', (m: { code?: string; message: string }) => {
      revoked = m;
    });
    try {
      const ack = await v.ok<{ conversation_id: string; response_id: string }>('ask', { client_message_id: 'del-1', text: 'anything' });
      await v.finished(ack.response_id);
      await assert.rejects(deleteWidgetClient(CLI, { accountId: other.accountId, clientId: client.client_id }), { code: 'not_found' });
      const started = Date.now();
      assert.deepEqual(await deleteWidgetClient(CLI, { accountId: acct.accountId, clientId: client.client_id }), {
        client_id: client.client_id,
        deleted: true,
      });
      await v.until(() => v.disconnectReason !== undefined, 'the deletion disconnect', 2000);
      assert.ok(Date.now() - started < 1000, 'within a second');
      assert.equal(v.disconnectReason, 'io server disconnect');
      assert.match(revoked?.message ?? '', /^token invalid: the widget client no longer exists/);
      assert.equal(revoked?.code, 'token_invalid');
      assert.match(await expectRefused(server.url, { origin: ORIGIN, auth: { token } }), /^token invalid: the widget client no longer exists/);
      assert.equal((await tokenRequest(server.url, { client_id: client.client_id, client_secret: client.client_secret })).status, 404);
      const conv = await api(server.url, acct.key)(`/customer-api/v2/conversation/${ack.conversation_id}`);
      assert.equal(conv.status, 200);
      assert.equal(conv.body.channel_id, client.channel_id);
    } finally {
      v.close();
    }
  });
});
