/** GET /privacy/export?visitor= — "Export": everything held about a visitor as one JSON file (docs/contracts.md §18). */
import { apiRoute } from '@/lib/api/handler';
import { requireRouteMember } from '@/lib/auth/session';
import { openVisitorExportAs, visitorExportResponse } from '@/lib/privacy/visitor';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(async (req) => {
  const member = await requireRouteMember('privacy.manage');
  return visitorExportResponse(await openVisitorExportAs(member, new URL(req.url).searchParams.get('visitor')));
});
