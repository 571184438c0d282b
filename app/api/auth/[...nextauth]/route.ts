/** next-auth (credentials, JWT sessions backed by admin_sessions) for the dashboard. */
import NextAuth from 'next-auth';
import { NextRequest } from 'next/server';
import { apiRoute } from '@/lib/api/handler';
import { authOptions, requestProtocol, secureCookiesFor } from '@/lib/auth/session';
import { readBodyCapped, SMALL_BODY_BYTES } from '@/lib/net/body';

export const dynamic = 'force-dynamic';

// next-auth v4 reads context.params synchronously; Next 16 hands a promise. Bodies (sign-in,
// sign-out) are read under a small cap while they stream (413 above it) before next-auth sees them.
const handler = apiRoute<{ nextauth: string[] }>(async (req, params) => {
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await readBodyCapped(req, SMALL_BODY_BYTES);
  const capped = new NextRequest(req.url, { method: req.method, headers: req.headers, body: body as BodyInit | undefined });
  return NextAuth(capped as never, { params } as never, authOptions({ secureCookies: secureCookiesFor(requestProtocol(req)) })) as Promise<Response>;
});
export { handler as GET, handler as POST };
