import type { Namespace, Server } from 'socket.io';
import { hostAllowed, originHost } from '../auth/domains';
import { onInvalidation } from '../cache/invalidation';
import { startAnswerLeases } from '../answers/runner';
import { setEventPublisher } from '../conversations/events';
import { onDrain } from '../core/drain';
import { currentClientDomains } from '../widget-clients/service';
import { onConnection } from './handlers';
import { socketLimits } from './limits';
import { publish, setChatNamespace, sweepLive } from './live';
import { refusal, widgetHandshake, type SocketData } from './middleware';
import { NAMESPACE, type Refusal } from './protocol';

/**
 * The `/widget` namespace: the handshake (lib/chat/middleware.ts), each connection's requests
 * (lib/chat/handlers.ts), revocation and drain; conversation events reach its rooms (lib/chat/live.ts).
 */
export function attachWidgetNamespace(io: Server): Namespace {
  io.of('/').use((_socket, next) => next(refusal('wrong_namespace', `unknown namespace: connect to ${NAMESPACE}`)));
  const nsp = io.of(NAMESPACE);
  setChatNamespace(nsp);
  setEventPublisher(publish);
  const limits = socketLimits();
  nsp.use(widgetHandshake(limits));
  nsp.on('connection', (socket) => onConnection(socket, limits));

  // Revocation reaches open sockets at once, on every instance: a deleted client or a removed
  // domain disconnects the sockets it covered (the widget's reconnect is then refused).
  onInvalidation('widget-client', (clientId) => {
    void revokeSockets(nsp, clientId);
  });
  // Drain: widgets are told, then their transport is closed; they reconnect by themselves
  // (to another instance behind the load balancer) and resume.
  onDrain(() => {
    for (const socket of nsp.sockets.values()) {
      socket.emit('server:draining', { code: 'draining', message: 'this server is restarting; reconnecting elsewhere' } satisfies Refusal);
      socket.conn.close();
    }
  });
  startAnswerLeases();
  const sweeper = setInterval(() => sweepLive(), 60_000);
  sweeper.unref();
  return nsp;
}

async function revokeSockets(nsp: Namespace, clientId: string) {
  const mine = [...nsp.sockets.values()].filter((s) => (s.data as SocketData).claims?.clientId === clientId);
  if (mine.length === 0) return;
  let current: string[] | null;
  try {
    current = await currentClientDomains(clientId);
  } catch {
    return; // the database is away; the next handshake re-checks
  }
  for (const s of mine) {
    if (current && hostAllowed(originHost((s.data as SocketData).origin), current)) continue;
    const revoked: Refusal = current
      ? { code: 'domain_not_allowed', message: 'domain not allowed: this site is no longer registered for this widget' }
      : { code: 'token_invalid', message: 'token invalid: the widget client no longer exists' };
    s.emit('session:revoked', revoked);
    s.disconnect(true);
  }
}
