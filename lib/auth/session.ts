import type { NextAuthOptions } from 'next-auth';
import { getServerSession } from 'next-auth';
import { getToken } from 'next-auth/jwt';
import CredentialsProvider from 'next-auth/providers/credentials';
import { redirect } from 'next/navigation';
import { SignInThrottled, verifyAdminCredentials } from './admin-signin';

/**
 * Dashboard sessions, behind this one module (next-auth v4 receives security fixes only, so it
 * must stay swappable): credentials of the admin users, JWT sessions carrying the account id.
 */
export function authOptions(): NextAuthOptions {
  return {
    secret: process.env.NEXTAUTH_SECRET,
    session: { strategy: 'jwt', maxAge: 12 * 3600 },
    pages: { signIn: '/login' },
    providers: [
      CredentialsProvider({
        name: 'Email',
        credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
        async authorize(credentials, req) {
          const ip = (req?.headers?.['x-svc-peer-ip'] as string | undefined) ?? 'unknown';
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
      jwt({ token, user }) {
        if (user) {
          token.accountId = (user as unknown as { accountId: number }).accountId;
          token.email = user.email;
        }
        return token;
      },
      session({ session, token }) {
        (session as unknown as { accountId: number }).accountId = token.accountId as number;
        return session;
      },
    },
  };
}

export type DashboardSession = { accountId: number; email: string };

export async function getDashboardSession(): Promise<DashboardSession | null> {
  const session = await getServerSession(authOptions());
  const accountId = (session as unknown as { accountId?: number } | null)?.accountId;
  if (!session || !Number.isInteger(accountId)) return null;
  return { accountId: accountId!, email: session.user?.email ?? '' };
}

/** Every dashboard page and action calls this (the proxy only gates navigation). */
export async function requireDashboardSession(): Promise<DashboardSession> {
  const session = await getDashboardSession();
  if (!session) redirect('/login');
  return session;
}

/** The Customer API's cookie path: the signed-in admin reads their own account only. */
export async function accountFromSessionCookie(req: Request): Promise<{ accountId: number } | null> {
  if (!req.headers.get('cookie')) return null;
  const token = await getToken({ req: req as never, secret: process.env.NEXTAUTH_SECRET });
  const accountId = token?.accountId;
  return Number.isInteger(accountId) ? { accountId: accountId as number } : null;
}
