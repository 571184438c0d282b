/** GET /conversations/{id}/original/{mail} — "Show original": a received mail as it arrived, for the account's members. */
import { AppError } from '@/lib/core/errors';
import { apiRoute } from '@/lib/api/handler';
import { can } from '@/lib/auth/roles';
import { getDashboardSession } from '@/lib/auth/session';
import { originalMail } from '@/lib/email/originals';

export const dynamic = 'force-dynamic';
export const GET = apiRoute<{ id: string; mail: string }>(async (_req, params) => {
  const session = await getDashboardSession();
  if (!session || !can(session.role, 'records.read')) throw new AppError('not_found', 'No such mail.');
  return originalMail(session.accountId, params.id, params.mail);
});
