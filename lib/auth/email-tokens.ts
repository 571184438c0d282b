import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from './api-keys';
import { nextAuthSecret } from '../env';

/**
 * Secrets of emailed links and sign-in tickets. A link's token is random and stored only as its
 * SHA-256; a ticket is a short-lived HMAC-signed statement the server hands the browser between
 * two steps of signing in (no session exists before the last step).
 */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomBase62(43);
  return { token, hash: hashLinkToken(token) };
}

export function hashLinkToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A link token as it appears in a URL: anything else is refused before touching the database. */
export const LINK_TOKEN_RE = /^[0-9A-Za-z]{43}$/;

export type TicketPurpose = 'two_factor' | 'sign_in';

function ticketKey(): Buffer {
  return createHash('sha256')
    .update(`svc sign-in tickets\0${nextAuthSecret() ?? ''}`)
    .digest();
}

/** A ticket for `userId` and `purpose`, valid `seconds`. */
export function signTicket(userId: number, purpose: TicketPurpose, seconds: number, now = Date.now()): string {
  const body = Buffer.from(JSON.stringify({ u: userId, p: purpose, e: Math.floor(now / 1000) + seconds })).toString('base64url');
  return `${body}.${createHmac('sha256', ticketKey()).update(body).digest('base64url')}`;
}

/** The user id of a valid, unexpired ticket of that purpose, or null. */
export function verifyTicket(ticket: unknown, purpose: TicketPurpose, now = Date.now()): number | null {
  if (typeof ticket !== 'string' || ticket.length > 500) return null;
  const [body, mac] = ticket.split('.');
  if (!body || !mac) return null;
  const expected = createHmac('sha256', ticketKey()).update(body).digest();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const v = JSON.parse(Buffer.from(body, 'base64url').toString()) as { u: unknown; p: unknown; e: unknown };
    if (v.p !== purpose || typeof v.u !== 'number' || typeof v.e !== 'number' || v.e * 1000 < now) return null;
    return v.u;
  } catch {
    return null;
  }
}
