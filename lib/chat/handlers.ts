import type { Socket } from 'socket.io';
import type { z } from 'zod';
import { AppError, fromDatabaseError, isAppError } from '../core/errors';
import { getEnv } from '../env';
import { metrics } from '../ops/metrics';
import { uploadLimits } from '../uploads/service';
import { askAdmissions, chargeRequest, type SocketLimits, type Spender } from './limits';
import { roomOf } from './live';
import type { SocketData } from './middleware';
import { ClientRequests, MAX_QUESTION_CHARS, PROTOCOL_VERSION, type ClientRequestName, type Refusal, type SessionInfo } from './protocol';
import { ask, comment, feedback, handoffOf, history, messagesSeen, rating, requestPerson, visitorEmail } from '../visitor/service';
import { resume } from './requests';
import { isLegacyWidget, legacyHistory, legacyRoomOf } from './legacy';
import { recordSighting, sightingVersion } from './sightings';
import { describeIssues, issueParams } from '../zod-issues';

/** Refusals and failures become `{ ok: false, error }`; a database that is away is `unavailable`. */
function errorAck(name: string, e: unknown) {
  const known = isAppError(e) ? e : fromDatabaseError(e);
  if (known) return { ok: false, error: { code: known.code, message: known.message } };
  console.error(`socket ${name} failed:`, e);
  return { ok: false, error: { code: 'internal', message: 'Something went wrong; please try again.' } };
}

type Handler<N extends ClientRequestName> = (req: z.infer<(typeof ClientRequests)[N]>) => Promise<object>;

/** Registers one request: charged to the budgets, parsed by its schema, answered through its acknowledgement. */
function handle<N extends ClientRequestName>(socket: Socket, limits: SocketLimits, who: Spender, name: N, handler: Handler<N>) {
  (socket as unknown as { on: (n: string, fn: (p: unknown, a: unknown) => void) => void }).on(name, async (payload: unknown, ack: unknown) => {
    const reply = typeof ack === 'function' ? (ack as (r: unknown) => void) : () => {};
    try {
      const refused = await chargeRequest(limits, name, who);
      if (refused) return reply(refused);
      const parsed = ClientRequests[name].safeParse(payload);
      if (!parsed.success) {
        const message = describeIssues(issueParams(parsed.error, { path: 'full', fallback: name }));
        return reply({ ok: false, error: { code: 'invalid_request', message } });
      }
      reply({ ok: true, ...(await handler(parsed.data as z.infer<(typeof ClientRequests)[N]>)) });
    } catch (e) {
      reply(errorAck(name, e));
    }
  });
}

/** An accepted connection: its session, its expiry, its requests and what it counts while open. */
export function onConnection(socket: Socket, limits: SocketLimits) {
  const env = getEnv();
  const data = socket.data as SocketData;
  const { claims } = data;
  data.rooms = new Set();
  metrics.socketConnected(1);
  limits.perAddress.add(data.address, 1);
  limits.perClient.add(claims.clientId, 1);
  const refuseWhenFull = () => {
    if (data.rooms.size >= env.WIDGET_SUBSCRIPTIONS_PER_SOCKET) {
      throw new AppError('rate_limited', `A connection follows at most ${env.WIDGET_SUBSCRIPTIONS_PER_SOCKET} conversations.`);
    }
  };
  // A pre-2.1 widget also follows the conversation's legacy room: handoff events as it renders them (lib/chat/legacy.ts).
  const legacy = isLegacyWidget(socket.handshake.auth?.version);
  const join = (conversationId: string) => {
    const room = roomOf(conversationId);
    if (data.rooms.has(room)) return;
    refuseWhenFull();
    data.rooms.add(room);
    void socket.join(legacy ? [room, legacyRoomOf(conversationId)] : room);
  };
  recordSighting({ clientId: claims.clientId, accountId: claims.accountId, origin: data.origin, version: sightingVersion(socket.handshake.auth?.version) });

  const expiresIn = claims.exp * 1000 - Date.now();
  const expiry = setTimeout(
    () => {
      socket.emit('session:expired', { code: 'token_expired', message: 'token expired: request a new one and reconnect' } satisfies Refusal);
      socket.disconnect(true);
    },
    Math.max(0, Math.min(expiresIn, 2 ** 31 - 1)),
  );

  const session: SessionInfo = {
    protocol: PROTOCOL_VERSION,
    visitor_id: claims.visitorId,
    token_expires_at: claims.exp,
    limits: { ...uploadLimits(), question_max_chars: MAX_QUESTION_CHARS, events_per_10s: env.SOCKET_EVENTS_PER_10S },
    handoff: { enabled: false },
  };
  // The account's handoff switch is read before the session leaves; unreadable (database away): off until the next connection.
  void handoffOf(claims.accountId)
    .catch(() => session.handoff)
    .then((handoff) => socket.emit('session', { ...session, handoff }));

  const who: Spender = { visitorKey: `${claims.clientId}:${claims.visitorId}`, address: data.address, clientId: claims.clientId };
  const admission = askAdmissions(limits, who);
  handle(socket, limits, who, 'ask', (req) => {
    if (!req.conversation_id) refuseWhenFull(); // before a new conversation is created
    return ask(claims, join, req, admission());
  });
  handle(socket, limits, who, 'conversation:resume', (req) => resume(claims, join, (e) => socket.emit('event', e), req, legacy));
  handle(socket, limits, who, 'history', async (req) => {
    const h = await history(claims, join, req);
    return legacy ? { ...h, messages: legacyHistory(h.messages) } : h;
  });
  handle(socket, limits, who, 'feedback', (req) => feedback(claims, req));
  handle(socket, limits, who, 'comment', (req) => comment(claims, req));
  handle(socket, limits, who, 'handoff:request', (req) => requestPerson(claims, join, req));
  handle(socket, limits, who, 'rating', (req) => rating(claims, req));
  handle(socket, limits, who, 'visitor:email', (req) => visitorEmail(claims, req));
  handle(socket, limits, who, 'messages:seen', (req) => messagesSeen(claims, req));

  socket.on('disconnect', () => {
    clearTimeout(expiry);
    metrics.socketConnected(-1);
    limits.perAddress.add(data.address, -1);
    limits.perClient.add(claims.clientId, -1);
  });
}
