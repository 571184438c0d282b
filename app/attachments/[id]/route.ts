/** GET /attachments/{id} — download an attachment of the signed-in admin's account, streamed from the database. */
import { AppError } from '@/lib/api/errors';
import { apiRoute } from '@/lib/api/handler';
import { getDashboardSession } from '@/lib/auth/session';
import { openAttachment } from '@/lib/uploads/service';

export const dynamic = 'force-dynamic';
export const GET = apiRoute<{ id: string }>(async (_req, params) => {
  const session = await getDashboardSession();
  if (!session) throw new AppError('not_found', 'No such attachment.');
  const { file, body } = await openAttachment(session.accountId, params.id);
  return new Response(body, {
    headers: {
      'Content-Type': file.content_type,
      'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, no-store',
    },
  });
});
