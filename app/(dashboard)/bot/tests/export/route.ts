/** GET /bot/tests/export — the account's answer tests as CSV (`question,expect,value`), for owner and admins. */
import { AppError } from '@/lib/core/errors';
import { apiRoute } from '@/lib/api/handler';
import { can } from '@/lib/auth/roles';
import { getDashboardSession } from '@/lib/auth/session';
import { exportAnswerTestsCsv } from '@/lib/answer-tests/service';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(async () => {
  const session = await getDashboardSession();
  if (!session || !can(session.role, 'bot.manage')) throw new AppError('not_found', 'No such page.');
  return new Response(await exportAnswerTestsCsv(session), {
    headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': 'attachment; filename="answer-tests.csv"', 'Cache-Control': 'no-store' },
  });
});
