import type { Server, Socket } from 'socket.io';
import { z } from 'zod';
import { isAppError } from '../api/errors';
import { RateLimiter } from '../api/rate-limit';
import { hostAllowed, originHost } from '../auth/domains';
import { TokenRefused, verifyWidgetToken, withVisitor, type WidgetClaims } from '../auth/widget-tokens';
import { getEnv } from '../env';
import { metrics } from '../ops/metrics';
import { recordingRefusals } from '../widget-clients/refusals';
import { currentClientDomains } from '../widget-clients/service';
import { uploadLimits } from '../uploads/service';
import { ClientRequests, MAX_QUESTION_CHARS, NAMESPACE, PROTOCOL_VERSION, type ClientRequestName, type SessionInfo } from './protocol';
import { recordSighting } from './sightings';
import { ask, comment, feedback, history, subscribe, sweepStreams, unsubscribeAll } from './service';
import type { Subscriber } from './streams';

type Data = { claims: WidgetClaims; subscribers: Map<string, Subscriber> };

/**
 * The `/widget` namespace. The token and the Origin are checked in the namespace middleware,
 * which runs for polling and websocket alike, so a bad connection is refused before it is
 * accepted, with a connect_error whose message says why.
 */
export function attachWidgetNamespace(io: Server) {
  const env = getEnv();
  io.of('/').use((_socket, next) => next(new Error(`unknown namespace: connect to ${NAMESPACE}`)));
  const nsp = io.of(NAMESPACE);
  const limiter = new RateLimiter(env.SOCKET_EVENTS_PER_10S, 10_000);

  nsp.use((socket, next) => {
    next = recordingRefusals(socket.handshake, next);
    const q = socket.handshake.query;
    if (q.client_key !== undefined || q.clientKey !== undefined) {
      next(new Error('client_key in the address is not accepted: pass the access token as auth.token'));
      return;
    }
    const auth = socket.handshake.auth as { token?: unknown };
    verifyWidgetToken(auth?.token).then(async (claims) => {
      const origin = socket.handshake.headers.origin;
      if (!origin) return next(new Error('domain not allowed: the connection has no Origin header'));
      if (!hostAllowed(originHost(origin), claims.domains)) return next(new Error(`domain not allowed: ${origin} is not registered for this widget`));
      // The token's domains AND the client's current ones: a removed domain stops at once.
      const current = await currentClientDomains(claims.clientId);
      if (!current) return next(new Error('token invalid: the widget client no longer exists'));
      if (!hostAllowed(originHost(origin), current)) return next(new Error(`domain not allowed: ${origin} is no longer registered for this widget`));
      (socket.data as Data).claims = withVisitor(claims, (socket.handshake.auth as { visitor?: unknown }).visitor);
      next();
    }, (e) => {
      next(new Error(e instanceof TokenRefused ? e.message : 'token invalid'));
      if (!(e instanceof TokenRefused)) console.error('token check failed:', e);
    });
  });

  nsp.on('connection', (socket: Socket) => {
    const data = socket.data as Data;
    metrics.socketConnected(1);
    const { claims } = data;
    data.subscribers = new Map();
    const subFor = (conversationId: string) => {
      let sub = data.subscribers.get(conversationId);
      if (!sub) {
        sub = { id: socket.id, lastSent: 0, send: (e) => socket.emit('event', e) };
        data.subscribers.set(conversationId, sub);
      }
      return sub;
    };
    const version = typeof socket.handshake.auth?.version === 'string' ? socket.handshake.auth.version.slice(0, 40) : 'unknown';
    recordSighting({ clientId: claims.clientId, accountId: claims.accountId, origin: socket.handshake.headers.origin!, version });

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

    const on = <N extends ClientRequestName>(name: N, handler: (req: z.infer<(typeof ClientRequests)[N]>) => Promise<object>) => {
      (socket as unknown as { on: (n: string, fn: (p: unknown, a: unknown) => void) => void }).on(name, async (payload: unknown, ack: unknown) => {
        const reply = typeof ack === 'function' ? (ack as (r: unknown) => void) : () => {};
        const wait = limiter.take(socket.id);
        if (wait > 0) return reply({ ok: false, error: { code: 'rate_limited', message: `Too many messages; wait ${wait} s.` } });
        const parsed = ClientRequests[name].safeParse(payload);
        if (!parsed.success) {
          const message = parsed.error.issues.map((i) => `${i.path.join('.') || name}: ${i.message}`).join('; ');
          return reply({ ok: false, error: { code: 'invalid_request', message } });
        }
        try {
          reply({ ok: true, ...(await handler(parsed.data as z.infer<(typeof ClientRequests)[N]>)) });
        } catch (e) {
          if (isAppError(e)) return reply({ ok: false, error: { code: e.code, message: e.message } });
          console.error(`socket ${name} failed:`, e);
          reply({ ok: false, error: { code: 'internal', message: 'Something went wrong; please try again.' } });
        }
      });
    };

    on('ask', (req) => ask(claims, subFor, req));
    on('conversation:resume', async (req) => {
      const { lastSeq } = await subscribe(claims, subFor, req.conversation_id, req.last_seq);
      return { conversation_id: req.conversation_id, last_seq: lastSeq };
    });
    on('history', (req) => history(claims, subFor, req));
    on('feedback', (req) => feedback(claims, req));
    on('comment', (req) => comment(claims, req));

    socket.on('disconnect', () => {
      clearTimeout(expiry);
      metrics.socketConnected(-1);
      unsubscribeAll(socket.id, data.subscribers.keys());
    });
  });

  const sweeper = setInterval(() => { void sweepStreams(); }, 60_000);
  sweeper.unref();
  return nsp;
}
