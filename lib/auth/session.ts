import type { NextAuthOptions } from 'next-auth';
import { decode } from 'next-auth/jwt';
import CredentialsProvider from 'next-auth/providers/credentials';
import { redirect } from 'next/navigation';
import { getDb } from '../../db/client';
import { getActiveAdminSession, insertAdminSession, revokeAdminSession } from '../../db/queries/admin-sessions';
import { getEnv } from '../env';
import { getLogger } from '../core/logger';
import { PEER_IP_HEADER, PEER_PROTO_HEADER } from '../net/client-address';
import { SignInThrottled, verifyAdminCredentials } from './admin-signin';
import { randomBase62 } from './api-keys';
import { CALLBACK_COOKIE, CSRF_COOKIE, SESSION_COOKIE } from './cookies';
import { safeCallbackPath } from './redirects';

/**
 * Dashboard sessions, behind this one module (next-auth v4 receives security fixes only, so it
 * must stay swappable): credentials of the admin users; the JWT cookie names a row of
 * admin_sessions, and EVERY read (pages, server actions, the Customer API's cookie path) goes
 * through sessionFromCookieHeader, which checks that row: signing out and a password change end
 * sessions server-side (issue 8 item 5).
 */

/** Cookies get `Secure` when the request came over TLS (as a trusted proxy says) or NEXTAUTH_URL is https. */
export function secureCookiesFor(proto: string | null | undefined): boolean {
  return proto === 'https' || (getEnv().NEXTAUTH_URL?.startsWith('https://') ?? false);
}

/** A JWT whose admin_sessions row was revoked or expired: expected, so not logged as an error. */
class SessionEnded extends Error {
  constructor() { super('the dashboard session has ended'); }
}

export function authOptions(opts: { secureCookies?: boolean } = {}): NextAuthOptions {
  const secure = opts.secureCookies ?? secureCookiesFor(null);
  const cookie = { httpOnly: true, sameSite: 'lax' as const, path: '/', secure };
  const maxAge = getEnv().SESSION_MAX_AGE_SECONDS;
  return {
    secret: process.env.NEXTAUTH_SECRET,
    session: { strategy: 'jwt', maxAge },
    pages: { signIn: '/login' },
    useSecureCookies: secure,
    cookies: {
      sessionToken: { name: SESSION_COOKIE, options: cookie },
      csrfToken: { name: CSRF_COOKIE, options: cookie },
      callbackUrl: { name: CALLBACK_COOKIE, options: { ...cookie, httpOnly: false } },
    },
    providers: [
      CredentialsProvider({
        name: 'Email',
        credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
        async authorize(credentials, req) {
          const ip = (req?.headers?.[PEER_IP_HEADER] as string | undefined) ?? 'unknown';
          try {
            return await verifyAdminCredentials(credentials?.email, credentials?.password, ip);
          } catch (e) {
            if (e instanceof SignInThrottled) throw new Error(e.message);
            throw e;
          }
        },
      }),
    ],
    callbacks: {
      async jwt({ token, user }) {
        if (user) {
          const sid = randomBase62(32);
          await insertAdminSession(await getDb(), { id: sid, userId: Number(user.id), expiresAt: new Date(Date.now() + maxAge * 1000) });
          token.sid = sid;
          token.accountId = (user as unknown as { accountId: number }).accountId;
          token.email = user.email;
        } else if (typeof token.sid !== 'string' || !(await getActiveAdminSession(await getDb(), token.sid))) {
          // next-auth's own GET /api/auth/session would otherwise answer a signed-out cookie with its
          // email: a throw here makes it answer {} and clear the cookie.
          throw new SessionEnded();
        }
        return token;
      },
      session({ session, token }) {
        (session as unknown as { accountId: number }).accountId = token.accountId as number;
        return session;
      },
      redirect({ url, baseUrl }) {
        return `${baseUrl}${safeCallbackPath(url, new URL(baseUrl).host)}`;
      },
    },
    logger: {
      error(code, metadata) {
        if (metadata instanceof SessionEnded) return;
        getLogger().error({ err: metadata, code }, `next-auth: ${code}`);
      },
      warn(code) { getLogger().warn({ code }, `next-auth: ${code}`); },
      debug() {},
    },
    events: {
      async signOut({ token }) {
        if (typeof token?.sid === 'string') await revokeAdminSession(await getDb(), token.sid);
      },
    },
  };
}

export type DashboardSession = { accountId: number; email: string; userId: number; sessionId: string };

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** The one session reader: a valid, unexpired JWT whose session row is live. */
export async function sessionFromCookieHeader(cookieHeader: string | null): Promise<DashboardSession | null> {
  const raw = cookieValue(cookieHeader, SESSION_COOKIE);
  if (!raw || raw.length > 8192) return null;
  let sid: unknown;
  try {
    sid = (await decode({ token: raw, secret: process.env.NEXTAUTH_SECRET! }))?.sid;
  } catch {
    return null;
  }
  if (typeof sid !== 'string' || sid.length > 100) return null;
  const row = await getActiveAdminSession(await getDb(), sid);
  return row ? { accountId: row.accountId, email: row.email, userId: row.userId, sessionId: sid } : null;
}

export async function getDashboardSession(): Promise<DashboardSession | null> {
  // Imported here: next/headers needs Next's request context, and server.ts loads this module
  // outside it (the Customer API's direct door reads sessions through accountFromSessionCookie).
  const { headers } = await import('next/headers');
  return sessionFromCookieHeader((await headers()).get('cookie'));
}

/** Every dashboard page and action calls this (the proxy only gates navigation). */
export async function requireDashboardSession(): Promise<DashboardSession> {
  const session = await getDashboardSession();
  if (!session) redirect('/login');
  return session;
}

/** The Customer API's cookie path: the signed-in admin reads their own account only. */
export async function accountFromSessionCookie(req: { headers: { get(name: string): string | null } }): Promise<{ accountId: number } | null> {
  const session = await sessionFromCookieHeader(req.headers.get('cookie'));
  return session ? { accountId: session.accountId } : null;
}

/** The request's protocol as the server stamped it under TRUST_PROXY (for the Secure cookie attribute). */
export function requestProtocol(req: Request): string | null {
  return req.headers.get(PEER_PROTO_HEADER);
}
