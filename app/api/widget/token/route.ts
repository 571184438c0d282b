/** POST /api/widget/token — widget access tokens, backend (client secret) or client-id (Origin) mode. */
import { jsonResponse, methodNotAllowed } from '@/lib/api/handler';
import { clientIp, preflight, readJsonBody, widgetRoute, withCors } from '@/lib/api/widget-route';
import { issueWidgetToken } from '@/lib/widget-clients/service';

export const dynamic = 'force-dynamic';
export const POST = widgetRoute(async (req) =>
  withCors(jsonResponse(await issueWidgetToken(await readJsonBody(req), req.headers.get('origin'), clientIp(req))), 'POST'),
);
export const OPTIONS = preflight('POST');
export const { GET, PUT, PATCH, DELETE } = methodNotAllowed('POST');
