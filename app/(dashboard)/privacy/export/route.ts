/** GET /privacy/export?visitor= — "Export": everything held about a visitor as one JSON file (docs/contracts.md §18). */
import { apiRoute } from '@/lib/api/handler';
import { memberBy } from '@/lib/audit/contract';
import { getDashboardSession } from '@/lib/auth/session';
import { PEER_IP_HEADER } from '@/lib/net/client-address';
import { AppError } from '@/lib/core/errors';
import { openVisitorExportAs, visitorExportResponse } from '@/lib/privacy/visitor';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(async (req) => {
  const session = await getDashboardSession();
  if (!session) throw new AppError('unauthorized', 'Sign in first.');
  if (session.mustSetUpTwoFactor) throw new AppError('forbidden', 'Set up two-factor authentication on your profile first.');
  const by = memberBy(session.email, req.headers.get(PEER_IP_HEADER));
  return visitorExportResponse(await openVisitorExportAs({ ...session, by }, new URL(req.url).searchParams.get('visitor')));
});
