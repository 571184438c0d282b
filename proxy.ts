import { withAuth } from 'next-auth/middleware';

// Gates navigation only; every dashboard page and action also checks the session server-side.
export default withAuth({ pages: { signIn: '/login' } });

export const config = {
  matcher: ['/', '/conversations/:path*', '/responses/:path*', '/api-keys/:path*', '/widget/:path*', '/knowledge/:path*', '/attachments/:path*'],
};
