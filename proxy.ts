import { withAuth } from 'next-auth/middleware';
import { SESSION_COOKIE } from './lib/auth/cookies';

// Gates navigation only; every dashboard page and action also checks the session server-side
// (lib/auth/session.ts, where revoked sessions are refused).
export default withAuth({ pages: { signIn: '/login' }, cookies: { sessionToken: { name: SESSION_COOKIE } } });

export const config = {
  matcher: [
    '/',
    '/inbox/:path*',
    '/conversations/:path*',
    '/responses/:path*',
    '/insights/:path*',
    '/api-keys/:path*',
    '/widget/:path*',
    '/email/:path*',
    '/knowledge/:path*',
    '/webhooks/:path*',
    '/bot/:path*',
    '/team/:path*',
    '/audit/:path*',
    '/privacy/:path*',
    '/profile/:path*',
    '/attachments/:path*',
  ],
};
