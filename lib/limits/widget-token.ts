import { getEnv } from '../env';
import { addressLimitKey } from '../net/client-address';
import { getLimiter } from './limiter';

/**
 * The limits of POST /api/widget/token (issue 9 item 3). Per address: every request, charged
 * before any database work (an integrator's backend that proves its client secret gets the point
 * back, so one busy backend is not limited like a browser). Per client and per visitor: charged
 * only AFTER the cheap checks (shape, client exists, Origin or secret), so a flood of
 * unauthenticated requests cannot drain a tenant's budget and hide its widget.
 */
const MINUTE = 60;

function perAddress() {
  return getLimiter('widget-token:address', { points: getEnv().TOKEN_RATE_PER_IP_PER_MINUTE, durationSeconds: MINUTE });
}
function perClient() {
  return getLimiter('widget-token:client', { points: getEnv().TOKEN_RATE_PER_CLIENT_PER_MINUTE, durationSeconds: MINUTE });
}
function perVisitor() {
  return getLimiter('widget-token:visitor', { points: getEnv().TOKEN_RATE_PER_VISITOR_PER_MINUTE, durationSeconds: MINUTE });
}

/** First step of every token request: charges the caller's address (IPv6 by its /64). */
export async function chargeTokenAddress(ip: string): Promise<() => Promise<void>> {
  const key = addressLimitKey(ip);
  await perAddress().enforce(key, 'token requests from this address');
  return () => perAddress().reward(key);
}

/** Last step, once the request proved it may have a token for this client. */
export async function chargeTokenClient(clientId: string, visitorId: string | undefined): Promise<void> {
  if (visitorId !== undefined) await perVisitor().enforce(`${clientId}:${visitorId}`, 'token requests for this visitor');
  await perClient().enforce(clientId, 'token requests for this client');
}
