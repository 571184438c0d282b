import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { getDb } from '../../db/client';
import { getAdminUserByEmail } from '../../db/queries/accounts';
import { getEnv } from '../env';
import { getLimiter } from '../limits/limiter';
import { addressLimitKey } from '../net/client-address';
import { dummyPasswordHash, verifyPassword } from './passwords';
import { recordAudit } from '../audit/service';
import { memberBy } from '../audit/contract';

/**
 * Sign-in throttling after OWASP's authentication cheat sheet: no hard lock that a stranger can
 * trigger against an admin who knows the password.
 * - per (email, address): after SIGNIN_FAILURES_PER_EMAIL_AND_IP failures in 15 minutes that pair
 *   is refused for 15 minutes (only guesses from that address are stopped);
 * - per address: after SIGNIN_FAILURES_PER_IP failures (any emails) the address is refused;
 * - per email, from anywhere: after SIGNIN_FAILURES_PER_EMAIL failures every attempt for it waits
 *   first (250 ms, doubling, at most SIGNIN_SLOWDOWN_MAX_MS) and is then answered normally.
 * The per-email counters are kept under a 16-bit hash of the email, never the email itself: the
 * memory of failed emails is at most 65,536 counters however many emails are tried (a collision
 * only slows another email down, it never refuses it). Every counter expires with its window.
 */
const WINDOW_SECONDS = 15 * 60;
const EMAIL_BUCKETS = 1 << 16;

const hashOf = (email: string) => createHash('sha256').update(email).digest();
const emailBucket = (email: string) => `e${hashOf(email).readUInt16BE(0) % EMAIL_BUCKETS}`;
// The pair is (address, email bucket): an address's pair counters are at most its own failures.
const pairKey = (email: string, ip: string) => `${addressLimitKey(ip)}|${emailBucket(email)}`;

function limiters() {
  const env = getEnv();
  return {
    pair: getLimiter('signin:email-address', { points: env.SIGNIN_FAILURES_PER_EMAIL_AND_IP, durationSeconds: WINDOW_SECONDS }),
    address: getLimiter('signin:address', { points: env.SIGNIN_FAILURES_PER_IP, durationSeconds: WINDOW_SECONDS }),
    // Counts only (never refuses): the slow-down reads how many failures the email's bucket has.
    email: getLimiter('signin:email', { points: 1_000_000_000, durationSeconds: WINDOW_SECONDS }),
  };
}

/** How long an attempt for an email with `failures` recent failures waits before it is checked. */
export function slowdownMs(failures: number, env = getEnv()): number {
  const over = failures - env.SIGNIN_FAILURES_PER_EMAIL;
  if (over < 0) return 0;
  return Math.min(env.SIGNIN_SLOWDOWN_MAX_MS, 250 * 2 ** Math.min(over, 20));
}

/** Recent failures counted for an email (from every address). */
export async function emailFailures(email: string): Promise<number> {
  const left = await limiters().email.peek(emailBucket(email));
  return left === null ? 0 : 1_000_000_000 - left;
}

/** Records one failed sign-in (exported for the bounded-memory test). */
export async function recordSignInFailure(email: string, ip: string): Promise<void> {
  const l = limiters();
  await Promise.all([l.pair.consume(pairKey(email, ip)), l.address.consume(addressLimitKey(ip)), l.email.consume(emailBucket(email))]);
}

const exhausted = (left: number | null) => left !== null && left <= 0;

export class SignInThrottled extends Error {}
/** `ip`: the client address of the sign-in, for its audit entry (written with the session row). */
export type SignedInAdmin = { id: string; email: string; accountId: number; twoFactor: boolean; ip?: string };

/**
 * Checks an admin's credentials. An unknown email and a wrong password take the same time and
 * give the same answer (null). Throws SignInThrottled when this address may not try (see above).
 */
export async function verifyAdminCredentials(email: unknown, password: unknown, ip: string): Promise<SignedInAdmin | null> {
  const normalized = typeof email === 'string' ? email.trim().toLowerCase().slice(0, 320) : '';
  const l = limiters();
  if (exhausted(await l.address.peek(addressLimitKey(ip)))) {
    throw new SignInThrottled('Too many failed sign-ins from your network; wait 15 minutes and try again.');
  }
  if (exhausted(await l.pair.peek(pairKey(normalized, ip)))) {
    throw new SignInThrottled('Too many failed sign-ins for this email from your network; wait 15 minutes and try again.');
  }
  const wait = slowdownMs(await emailFailures(normalized));
  if (wait > 0) await sleep(wait);
  const pw = typeof password === 'string' ? password : '';
  const user = normalized && pw.length <= 1024 ? await getAdminUserByEmail(await getDb(), normalized) : null;
  const ok = await verifyPassword(pw, user?.passwordHash ?? (await dummyPasswordHash()));
  if (!user || !ok) {
    await recordSignInFailure(normalized, ip);
    // Only an email of a member is logged (to that member's account); an unknown one has no account to log to.
    if (user) await recordAudit(await getDb(), user.accountId, memberBy(user.email, ip), 'member.sign_in_failed', user.email);
    return null;
  }
  await l.pair.reset(pairKey(normalized, ip));
  return { id: String(user.id), email: user.email, accountId: user.accountId, twoFactor: !!user.totpEnabledAt };
}
