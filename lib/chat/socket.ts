import type { Namespace, Server, Socket } from 'socket.io';
import { z } from 'zod';
import { AppError, fromDatabaseError, isAppError } from '../api/errors';
import { hostAllowed, originHost } from '../auth/domains';
import { TokenRefused, verifyWidgetToken, withVisitor, type WidgetClaims } from '../auth/widget-tokens';
import { onInvalidation } from '../cache/invalidation';
import { getEnv } from '../env';
import { consumeInOrder, getLimiter, throwIfRefused } from '../limits/limiter';
import { addressLimitKey, clientAddressOf } from '../net/client-address';
import { metrics } from '../ops/metrics';
import { isDraining, onDrain } from '../server/drain';
import { recordingRefusals } from '../widget-clients/refusals';
import { currentClientDomains } from '../widget-clients/service';
import { uploadLimits } from '../uploads/service';
import { setEventPublisher } from '../conversations/events';
import { publish, roomOf, setChatNamespace, sweepLive } from './live';
import { ClientRequests, MAX_QUESTION_CHARS, NAMESPACE, PROTOCOL_VERSION, type ClientRequestName, type SessionInfo } from './protocol';
import { recordSighting, sightingVersion } from './sightings';
import { ask, comment, feedback, history, resume } from './requests';
import { startAnswerLeases } from '../answers/runner';

type Data = { claims: WidgetClaims; address: string; origin: string; rooms: Set<string> };

/** Open widget sockets of this instance per client address and per widget client (per process by nature). */
class SocketCounts {
  private counts = new Map<string, number>();
  get(key: string) { return this.counts.get(key) ?? 0; }
  add(key: string, n: number) {
    const v = this.get(key) + n;
    if (v <= 0) this.counts.delete(key); else this.counts.set(key, v);
  }
}

/** Refusals and failures become `{ ok: false, error }`; a database that is away is `unavailable`. */
function errorAck(name: string, e: unknown) {
  const known = isAppError(e) ? e : fromDatabaseError(e);
  if (known) return { ok: false, error: { code: known.code, message: known.message } };
  console.error(`socket ${name} failed:`, e);
  return { ok: false, error: { code: 'internal', message: 'Something went wrong; please try again.' } };
}

/**
 * The `/widget` namespace. The token and the Origin are checked in the namespace middleware,
 * which runs for polling and websocket alike, so a bad connection is refused before it is
 * accepted, with a connect_error whose message says why.
 */
export function attachWidgetNamespace(io: Server): Namespace {
  const env = getEnv();
  io.of('/').use((_socket, next) => next(new Error(`unknown namespace: connect to ${NAMESPACE}`)));
  const nsp = io.of(NAMESPACE);
  setChatNamespace(nsp);
  setEventPublisher(publish);
  const perAddress = new SocketCounts();
  const perClient = new SocketCounts();
  // Keyed by visitor, client and address (not by socket): a new socket never gets a fresh budget.
  const events = getLimiter('socket-events', { points: env.SOCKET_EVENTS_PER_10S, durationSeconds: 10 });
  const eventsPerAddress = getLimiter('socket-events-address', { points: env.SOCKET_EVENTS_PER_10S * 25, durationSeconds: 10 });
  const asks = {
    visitor: getLimiter('ask-visitor', { points: env.ASKS_PER_MINUTE_PER_VISITOR, durationSeconds: 60 }),
    address: getLimiter('ask-address', { points: env.ASKS_PER_MINUTE_PER_ADDRESS, durationSeconds: 60 }),
    client: getLimiter('ask-client', { points: env.ASKS_PER_MINUTE_PER_CLIENT, durationSeconds: 60 }),
  };

  nsp.use((socket, next) => {
    if (isDraining()) return next(new Error('server draining: reconnect to another instance'));
    next = recordingRefusals(socket.handshake, next);
    const q = socket.handshake.query;
    if (q.client_key !== undefined || q.clientKey !== undefined) {
      next(new Error('client_key in the address is not accepted: pass the access token as auth.token'));
      return;
    }
    // The client's address under TRUST_PROXY (behind nginx every peer is the proxy), IPv6 by its /64.
    const address = addressLimitKey(clientAddressOf(socket.request).ip);
    if (perAddress.get(address) >= env.WIDGET_SOCKETS_PER_ADDRESS) {
      return next(new Error(`too many connections from this address (at most ${env.WIDGET_SOCKETS_PER_ADDRESS})`));
    }
    const auth = socket.handshake.auth as { token?: unknown };
    const check = async () => {
      const claims = await verifyWidgetToken(auth?.token);
      const origin = socket.handshake.headers.origin;
      if (!origin) return next(new Error('domain not allowed: the connection has no Origin header'));
      if (!hostAllowed(originHost(origin), claims.domains)) return next(new Error(`domain not allowed: ${origin} is not registered for this widget`));
      // The token's domains AND the client's current ones: a removed domain stops at once.
      const current = await currentClientDomains(claims.clientId);
      if (!current) return next(new Error('token invalid: the widget client no longer exists'));
      if (!hostAllowed(originHost(origin), current)) return next(new Error(`domain not allowed: ${origin} is no longer registered for this widget`));
      if (perClient.get(claims.clientId) >= env.WIDGET_SOCKETS_PER_CLIENT) {
        return next(new Error(`too many connections for this widget client (at most ${env.WIDGET_SOCKETS_PER_CLIENT})`));
      }
      Object.assign(socket.data as Data, { claims: withVisitor(claims, (socket.handshake.auth as { visitor?: unknown }).visitor), address, origin });
      next();
    };
    // Any failure refuses at once (a database error included), never a hang.
    check().catch((e) => {
      if (e instanceof TokenRefused) return next(new Error(e.message));
      if (fromDatabaseError(e)) return next(new Error('service unavailable: the database is unreachable; retry shortly'));
      console.error('token check failed:', e);
      next(new Error('token invalid'));
    });
  });

  nsp.on('connection', (socket: Socket) => {
    const data = socket.data as Data;
    const { claims } = data;
    data.rooms = new Set();
    metrics.socketConnected(1);
    perAddress.add(data.address, 1);
    perClient.add(claims.clientId, 1);
    const refuseWhenFull = () => {
      if (data.rooms.size >= env.WIDGET_SUBSCRIPTIONS_PER_SOCKET) {
        throw new AppError('rate_limited', `A connection follows at most ${env.WIDGET_SUBSCRIPTIONS_PER_SOCKET} conversations.`);
      }
    };
    const join = (conversationId: string) => {
      const room = roomOf(conversationId);
      if (data.rooms.has(room)) return;
      refuseWhenFull();
      data.rooms.add(room);
      void socket.join(room);
    };
    recordSighting({ clientId: claims.clientId, accountId: claims.accountId, origin: data.origin, version: sightingVersion(socket.handshake.auth?.version) });

    const expiresIn = claims.exp * 1000 - Date.now();
    const expiry = setTimeout(() => {
      socket.emit('session:expired', { message: 'token expired: request a new one and reconnect' });
      socket.disconnect(true);
    }, Math.max(0, Math.min(expiresIn, 2 ** 31 - 1)));

    const session: SessionInfo = {
      protocol: PROTOCOL_VERSION, visitor_id: claims.visitorId, token_expires_at: claims.exp,
      limits: { ...uploadLimits(), question_max_chars: MAX_QUESTION_CHARS, events_per_10s: env.SOCKET_EVENTS_PER_10S },
    };
    socket.emit('session', session);

    const visitorKey = `${claims.clientId}:${claims.visitorId}`;
    const on = <N extends ClientRequestName>(name: N, handler: (req: z.infer<(typeof ClientRequests)[N]>) => Promise<object>) => {
      (socket as unknown as { on: (n: string, fn: (p: unknown, a: unknown) => void) => void }).on(name, async (payload: unknown, ack: unknown) => {
        const reply = typeof ack === 'function' ? (ack as (r: unknown) => void) : () => {};
        try {
          // `ask` has its own, stricter limits (per visitor, address and client per minute, below):
          // charging it to the per-event budget too cost two more Redis round trips per question.
          for (const [limiter, key] of name === 'ask' ? [] : [[events, visitorKey], [eventsPerAddress, data.address]] as const) {
            const r = await limiter.consume(key);
            if (!r.allowed) return reply({ ok: false, error: { code: 'rate_limited', message: `Too many messages; wait ${r.retryAfterSeconds} s.` } });
          }
          const parsed = ClientRequests[name].safeParse(payload);
          if (!parsed.success) {
            const message = parsed.error.issues.map((i) => `${i.path.join('.') || name}: ${i.message}`).join('; ');
            return reply({ ok: false, error: { code: 'invalid_request', message } });
          }
          reply({ ok: true, ...(await handler(parsed.data as z.infer<(typeof ClientRequests)[N]>)) });
        } catch (e) {
          reply(errorAck(name, e));
        }
      });
    };

    // Points the last ask's check left (the fewest over the three limits); null before the first.
    let askRoom: number | null = null;
    on('ask', async (req) => {
      if (!req.conversation_id) refuseWhenFull(); // before a new conversation is created
      // In this order, one Redis round trip: the shared per-address and per-client budgets are
      // charged only when the visitor's own passed, so one visitor's flood never spends them.
      const check = async () => {
        askRoom = 0;
        const r = await consumeInOrder([[asks.visitor, visitorKey], [asks.address, data.address], [asks.client, claims.clientId]]);
        askRoom = r.allowed ? r.remaining : 0;
        throwIfRefused(r, 'questions');
      };
      // The check overlaps the conversation's reads only while the last one left room for more than
      // one question: a visitor near a limit (or flooding) is refused before anything is read.
      return ask(claims, join, req, { check, overlap: askRoom !== null && askRoom > 1 });
    });
    on('conversation:resume', (req) => resume(claims, join, (e) => socket.emit('event', e), req));
    on('history', (req) => history(claims, join, req));
    on('feedback', (req) => feedback(claims, req));
    on('comment', (req) => comment(claims, req));

    socket.on('disconnect', () => {
      clearTimeout(expiry);
      metrics.socketConnected(-1);
      perAddress.add(data.address, -1);
      perClient.add(claims.clientId, -1);
    });
  });

  // Revocation reaches open sockets at once, on every instance: a deleted client or a removed
  // domain disconnects the sockets it covered (the widget's reconnect is then refused).
  onInvalidation('widget-client', (clientId) => { void revokeSockets(nsp, clientId); });
  // Drain: widgets are told, then their transport is closed; they reconnect by themselves
  // (to another instance behind the load balancer) and resume.
  onDrain(() => {
    for (const socket of nsp.sockets.values()) {
      socket.emit('server:draining', { message: 'this server is restarting; reconnecting elsewhere' });
      socket.conn.close();
    }
  });
  startAnswerLeases();
  const sweeper = setInterval(() => sweepLive(), 60_000);
  sweeper.unref();
  return nsp;
}

async function revokeSockets(nsp: Namespace, clientId: string) {
  const mine = [...nsp.sockets.values()].filter((s) => (s.data as Data).claims?.clientId === clientId);
  if (mine.length === 0) return;
  let current: string[] | null;
  try {
    current = await currentClientDomains(clientId);
  } catch {
    return; // the database is away; the next handshake re-checks
  }
  for (const s of mine) {
    if (current && hostAllowed(originHost((s.data as Data).origin), current)) continue;
    s.emit('session:revoked', { message: current ? 'domain not allowed: this site is no longer registered for this widget' : 'token invalid: the widget client no longer exists' });
    s.disconnect(true);
  }
}
