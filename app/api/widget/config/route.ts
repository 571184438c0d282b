/** GET /api/widget/config — limits the widget must honour and, with `client_id`, that client's appearance. */
import { jsonResponse, methodNotAllowed } from '@/lib/api/handler';
import { preflight, widgetRoute, withCors } from '@/lib/api/widget-route';
import { widgetConfig } from '@/lib/chat/config';

export const dynamic = 'force-dynamic';
export const GET = widgetRoute(async (req) => {
  const config = await widgetConfig(new URL(req.url).searchParams.get('client_id'));
  return withCors(jsonResponse(config, { headers: { 'Cache-Control': 'public, max-age=60' } }), 'GET');
});
export const OPTIONS = preflight('GET');
export const { POST, PUT, PATCH, DELETE } = methodNotAllowed('GET');
