import { getDb } from '../../db/client';
import { getAdminUserByEmail } from '../../db/queries/accounts';
import { getEnv } from '../env';
import { dummyPasswordHash, verifyPassword } from './passwords';

/** Failed attempts in a sliding window, per key. */
class FailureWindow {
  private failures = new Map<string, number[]>();
  constructor(private readonly limit: number, private readonly windowMs: number) {}
  blocked(key: string, now = Date.now()): boolean {
    const list = (this.failures.get(key) ?? []).filter((t) => now - t < this.windowMs);
    this.failures.set(key, list);
    return list.length >= this.limit;
  }
  fail(key: string, now = Date.now()) {
    const list = this.failures.get(key) ?? [];
    list.push(now);
    this.failures.set(key, list);
  }
  clear(key: string) { this.failures.delete(key); }
}

const WINDOWS = Symbol.for('svc.signinWindows');
function windows() {
  const holder = globalThis as { [WINDOWS]?: { email: FailureWindow; ip: FailureWindow } };
  const env = getEnv();
  holder[WINDOWS] ??= {
    email: new FailureWindow(env.SIGNIN_FAILURES_PER_EMAIL, 15 * 60_000),
    ip: new FailureWindow(env.SIGNIN_FAILURES_PER_IP, 15 * 60_000),
  };
  return holder[WINDOWS];
}

export class SignInThrottled extends Error {}
export type SignedInAdmin = { id: string; email: string; accountId: number };

/**
 * Checks an admin's credentials. An unknown email and a wrong password take the same time and
 * give the same answer (null); too many failures per email or per address refuse every attempt
 * for a while, known email or not.
 */
export async function verifyAdminCredentials(email: unknown, password: unknown, ip: string): Promise<SignedInAdmin | null> {
  const normalized = typeof email === 'string' ? email.trim().toLowerCase() : '';
  const w = windows();
  if (w.email.blocked(normalized) || w.ip.blocked(ip)) {
    throw new SignInThrottled('Too many failed sign-ins; wait 15 minutes and try again.');
  }
  const pw = typeof password === 'string' ? password : '';
  const user = normalized && pw.length <= 1024 ? await getAdminUserByEmail(await getDb(), normalized) : null;
  const ok = await verifyPassword(pw, user?.passwordHash ?? (await dummyPasswordHash()));
  if (!user || !ok) {
    w.email.fail(normalized);
    w.ip.fail(ip);
    return null;
  }
  w.email.clear(normalized);
  return { id: String(user.id), email: user.email, accountId: user.accountId };
}
