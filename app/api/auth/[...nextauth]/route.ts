/** next-auth (credentials, JWT sessions) for the dashboard. */
import NextAuth from 'next-auth';
import { authOptions } from '@/lib/auth/session';

export const dynamic = 'force-dynamic';

// next-auth v4 reads context.params synchronously; Next 16 hands a promise.
async function handler(req: Request, ctx: { params: Promise<{ nextauth: string[] }> }) {
  return NextAuth(req as never, { params: await ctx.params } as never, authOptions());
}
export { handler as GET, handler as POST };
