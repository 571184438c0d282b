import type { NextAuthOptions } from 'next-auth';
import { decode } from 'next-auth/jwt';
import CredentialsProvider from 'next-auth/providers/credentials';
import { notFound, redirect } from 'next/navigation';
import { getDb, type Db } from '../../db/client';
import { recordAudit } from '../audit/service';
import { memberBy, type AuditBy } from '../audit/contract';
import { getActiveAdminSession, insertAdminSession, revokeAdminSession, touchLastSeen } from '../../db/queries/admin-sessions';
import { AppError } from '../core/errors';
import { getEnv, nextAuthSecret } from '../env';
import { getLogger } from '../core/logger';
import { PEER_IP_HEADER, PEER_PROTO_HEADER } from '../net/client-address';
import { SignInThrottled, verifyAdminCredentials, type SignedInAdmin } from './admin-signin';
import { signTicket, verifyTicket } from './email-tokens';
import { signInError } from './signin-errors';
import { sessionsOfUserChanged } from './session-events';
import { checkSecondFactor, CodeThrottled } from './two-factor';
import { getUserById } from '../../db/queries/team';
import { randomBase62 } from './api-keys';
import { CALLBACK_COOKIE, CSRF_COOKIE, SESSION_COOKIE } from './cookies';
import { safeCallbackPath } from './redirects';
import { can, requireRole, RoleSchema, type Action, type Role } from './roles';

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
  constructor() {
    super('the dashboard session has ended');
  }
}

/**
 * The steps of signing in (docs/stack-notes.md: no session before the second factor): the password step
 * returns the member, or, when two-factor is on, refuses with a short-lived `two_factor` ticket
 * that the code step exchanges (with a code) for the session. A `sign_in` ticket (an accepted
 * invitation or a confirmed sign-up, just now in this browser) signs in without a password.
 */
async function signInStep(c: Record<string, string | undefined>, ip: string): Promise<SignedInAdmin | null> {
  try {
    if (c.ticket) {
      const twoFactorUser = verifyTicket(c.ticket, 'two_factor');
      if (twoFactorUser !== null) {
        if (!(await checkSecondFactor(twoFactorUser, c.code, ip))) throw signInError('code_invalid', c.ticket);
        return signedInUser(twoFactorUser, ip);
      }
      const userId = verifyTicket(c.ticket, 'sign_in');
      if (userId === null) throw signInError('ticket_expired');
      return signedInUser(userId, ip);
    }
    const user = await verifyAdminCredentials(c.email, c.password, ip);
    if (user?.twoFactor) throw signInError('two_factor_required', signTicket(Number(user.id), 'two_factor', 300));
    return user && { ...user, ip };
  } catch (e) {
    if (e instanceof SignInThrottled) throw new Error(e.message);
    if (e instanceof CodeThrottled) throw signInError('throttled');
    throw e;
  }
}

async function signedInUser(userId: number, ip: string): Promise<SignedInAdmin | null> {
  const user = await getUserById(await getDb(), userId);
  return user ? { id: String(user.id), email: user.email, accountId: user.accountId, twoFactor: !!user.totpEnabledAt, ip } : null;
}

export function authOptions(opts: { secureCookies?: boolean } = {}): NextAuthOptions {
  const secure = opts.secureCookies ?? secureCookiesFor(null);
  const cookie = { httpOnly: true, sameSite: 'lax' as const, path: '/', secure };
  const maxAge = getEnv().SESSION_MAX_AGE_SECONDS;
  return {
    secret: nextAuthSecret(),
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
        credentials: {
          email: { label: 'Email', type: 'email' },
          password: { label: 'Password', type: 'password' },
          ticket: { label: 'Ticket', type: 'text' },
          code: { label: 'Authentication code', type: 'text' },
        },
        async authorize(credentials, req) {
          const ip = (req?.headers?.[PEER_IP_HEADER] as string | undefined) ?? 'unknown';
          return signInStep(credentials ?? {}, ip);
        },
      }),
    ],
    callbacks: {
      async jwt({ token, user }) {
        if (user) {
          const sid = randomBase62(32);
          const admin = user as unknown as SignedInAdmin;
          // The session and its audit entry commit together: no session without its sign-in entry.
          await (await getDb()).transaction(async (tx) => {
            await insertAdminSession(tx as unknown as Db, { id: sid, userId: Number(user.id), expiresAt: new Date(Date.now() + maxAge * 1000) });
            await recordAudit(tx as unknown as Db, admin.accountId, memberBy(admin.email, admin.ip), 'member.signed_in', admin.email);
          });
          token.sid = sid;
          token.accountId = admin.accountId;
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
      warn(code) {
        getLogger().warn({ code }, `next-auth: ${code}`);
      },
      debug() {},
    },
    events: {
      async signOut({ token }) {
        const userId = typeof token?.sid === 'string' ? await revokeAdminSession(await getDb(), token.sid) : null;
        if (userId !== null) await sessionsOfUserChanged(userId); // its open inbox sockets close now
      },
    },
  };
}

export type DashboardSession = {
  accountId: number;
  email: string;
  name: string;
  userId: number;
  sessionId: string;
  role: Role;
  mustSetUpTwoFactor: boolean;
};

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
    sid = (await decode({ token: raw, secret: nextAuthSecret()! }))?.sid;
  } catch {
    return null;
  }
  if (typeof sid !== 'string' || sid.length > 100) return null;
  const row = await getActiveAdminSession(await getDb(), sid);
  if (!row) return null;
  return {
    accountId: row.accountId,
    email: row.email,
    name: row.name,
    userId: row.userId,
    sessionId: sid,
    role: RoleSchema.catch('agent').parse(row.role),
    mustSetUpTwoFactor: row.mustSetUpTwoFactor,
  };
}

export async function getDashboardSession(): Promise<DashboardSession | null> {
  // Imported here: next/headers needs Next's request context, and server.ts loads this module
  // outside it (the Customer API's direct door reads sessions through accountFromSessionCookie).
  const { headers } = await import('next/headers');
  return sessionFromCookieHeader((await headers()).get('cookie'));
}

/** The dashboard layout's reader: signed in, whatever the role or two-factor state. */
export async function requireDashboardSession(): Promise<DashboardSession> {
  const session = await getDashboardSession();
  if (!session) redirect('/login');
  await touchLastSeen(await getDb(), session.userId);
  return session;
}

/**
 * Every dashboard page calls this (the proxy only gates navigation): a member whose account
 * requires two-factor sign-in sets it up first; a page the role may not open is the 404 page.
 */
export async function requirePageMember(action: Action, opts: { twoFactorSetup?: boolean } = {}): Promise<DashboardSession> {
  const session = await requireDashboardSession();
  if (session.mustSetUpTwoFactor && !opts.twoFactorSetup) redirect('/profile');
  if (!can(session.role, action)) notFound();
  return session;
}

/** A member making a change: the session and `by`, their email and client address for the audit log. */
export type ActingMember = DashboardSession & { by: AuditBy };

/** Every server action calls this (inside actionResult): a refused role is a 403 AppError. */
export async function requireMember(action: Action): Promise<ActingMember> {
  const session = await getDashboardSession();
  if (!session) redirect('/login');
  return actingMember(session, action);
}

/** A dashboard route handler's member (a download): the same checks, and 401 problem+json without a session instead of a redirect. */
export async function requireRouteMember(action: Action): Promise<ActingMember> {
  const session = await getDashboardSession();
  if (!session) throw new AppError('unauthorized', 'Sign in first.');
  return actingMember(session, action);
}

async function actingMember(session: DashboardSession, action: Action): Promise<ActingMember> {
  if (session.mustSetUpTwoFactor) throw new AppError('forbidden', 'Set up two-factor authentication on your profile first.');
  requireRole(session, action);
  const { headers } = await import('next/headers');
  return { ...session, by: memberBy(session.email, (await headers()).get(PEER_IP_HEADER)) };
}

/** The Customer API's cookie path: the signed-in member reads their own account's records only. */
export async function accountFromSessionCookie(req: { headers: { get(name: string): string | null } }): Promise<{ accountId: number } | null> {
  const session = await sessionFromCookieHeader(req.headers.get('cookie'));
  if (!session) return null;
  if (session.mustSetUpTwoFactor) throw new AppError('forbidden', 'Set up two-factor authentication on your profile first.');
  requireRole(session, 'records.read');
  return { accountId: session.accountId };
}

/** The request's protocol as the server stamped it under TRUST_PROXY (for the Secure cookie attribute). */
export function requestProtocol(req: Request): string | null {
  return req.headers.get(PEER_PROTO_HEADER);
}
