/** GET /attachments/{id} — the signed-in admin's download of an attachment (the same answer as GET /customer-api/v2/attachments/{id}). */
import { AppError } from '@/lib/core/errors';
import { apiRoute } from '@/lib/api/handler';
import { can } from '@/lib/auth/roles';
import { getDashboardSession } from '@/lib/auth/session';
import { attachmentDownload } from '@/lib/uploads/service';

export const dynamic = 'force-dynamic';
export const GET = apiRoute<{ id: string }>(async (_req, params) => {
  const session = await getDashboardSession();
  if (!session || !can(session.role, 'records.read')) throw new AppError('not_found', 'No such attachment.');
  return attachmentDownload(session.accountId, params.id);
});
