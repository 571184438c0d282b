/** GET /privacy/export?visitor= — "Export": everything held about a visitor as one JSON file (docs/contracts.md §18). */
import { apiRoute } from '@/lib/api/handler';
import { getDashboardSession } from '@/lib/auth/session';
import { AppError } from '@/lib/core/errors';
import { openVisitorExportAs, visitorExportResponse } from '@/lib/privacy/visitor';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(async (req) => {
  const session = await getDashboardSession();
  if (!session) throw new AppError('unauthorized', 'Sign in first.');
  if (session.mustSetUpTwoFactor) throw new AppError('forbidden', 'Set up two-factor authentication on your profile first.');
  return visitorExportResponse(await openVisitorExportAs(session, new URL(req.url).searchParams.get('visitor')));
});
