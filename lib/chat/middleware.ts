import type { Socket } from 'socket.io';
import { fromDatabaseError } from '../core/errors';
import { hostAllowed, originHost } from '../auth/domains';
import { TokenRefused, verifyWidgetToken, withVisitor, type WidgetClaims } from '../auth/widget-tokens';
import { getEnv } from '../env';
import { addressLimitKey, clientAddressOf } from '../net/client-address';
import { isDraining } from '../core/drain';
import { recordingRefusals } from '../widget-clients/refusals';
import { currentClientDomains } from '../widget-clients/service';
import type { SocketLimits } from './limits';
import type { RefusalCode } from './protocol';

/** What an accepted connection carries (socket.data). */
export type SocketData = { claims: WidgetClaims; address: string; origin: string; rooms: Set<string> };

/** A refusal as connect_error sends it: the message for people, `data.code` for the widget. */
export function refusal(code: RefusalCode, message: string): Error {
  return Object.assign(new Error(message), { data: { code } });
}

/**
 * The `/widget` namespace's handshake. It runs for polling and websocket alike, so a bad
 * connection is refused before it is accepted, with a connect_error that says why.
 */
export function widgetHandshake(limits: SocketLimits) {
  const env = getEnv();
  return (socket: Socket, next: (err?: Error) => void) => {
    if (isDraining()) return next(refusal('draining', 'server draining: reconnect to another instance'));
    // The client's address under TRUST_PROXY (behind nginx every peer is the proxy), IPv6 by its /64.
    const address = addressLimitKey(clientAddressOf(socket.request).ip);
    const refusals = recordingRefusals(socket.handshake, address, next);
    next = refusals.next;
    const q = socket.handshake.query;
    if (q.client_key !== undefined || q.clientKey !== undefined) {
      next(refusal('client_key_in_address', 'client_key in the address is not accepted: pass the access token as auth.token'));
      return;
    }
    if (limits.perAddress.get(address) >= env.WIDGET_SOCKETS_PER_ADDRESS) {
      return next(refusal('too_many_connections', `too many connections from this address (at most ${env.WIDGET_SOCKETS_PER_ADDRESS})`));
    }
    const auth = socket.handshake.auth as { token?: unknown };
    const check = async () => {
      const claims = await verifyWidgetToken(auth?.token);
      refusals.verified(claims.clientId);
      const origin = socket.handshake.headers.origin;
      if (!origin) return next(refusal('domain_not_allowed', 'domain not allowed: the connection has no Origin header'));
      if (!hostAllowed(originHost(origin), claims.domains))
        return next(refusal('domain_not_allowed', `domain not allowed: ${origin} is not registered for this widget`));
      // The token's domains AND the client's current ones: a removed domain stops at once.
      const current = await currentClientDomains(claims.clientId);
      if (!current) return next(refusal('token_invalid', 'token invalid: the widget client no longer exists'));
      if (!hostAllowed(originHost(origin), current))
        return next(refusal('domain_not_allowed', `domain not allowed: ${origin} is no longer registered for this widget`));
      if (limits.perClient.get(claims.clientId) >= env.WIDGET_SOCKETS_PER_CLIENT) {
        return next(refusal('too_many_connections', `too many connections for this widget client (at most ${env.WIDGET_SOCKETS_PER_CLIENT})`));
      }
      Object.assign(socket.data as SocketData, { claims: withVisitor(claims, (socket.handshake.auth as { visitor?: unknown }).visitor), address, origin });
      next();
    };
    // Any failure refuses at once (a database error included), never a hang.
    check().catch((e) => {
      if (e instanceof TokenRefused) {
        if (e.clientId) refusals.verified(e.clientId);
        return next(refusal(e.code, e.message));
      }
      if (fromDatabaseError(e)) return next(refusal('unavailable', 'service unavailable: the database is unreachable; retry shortly'));
      console.error('token check failed:', e);
      next(refusal('token_invalid', 'token invalid'));
    });
  };
}
