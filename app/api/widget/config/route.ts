/** GET /api/widget/config — limits the widget must honour (served, never hard-coded in the widget). */
import { jsonResponse, methodNotAllowed } from '@/lib/api/handler';
import { preflight, widgetRoute, withCors } from '@/lib/api/widget-route';
import { widgetConfig } from '@/lib/chat/config';

export const dynamic = 'force-dynamic';
export const GET = widgetRoute(async () => withCors(jsonResponse(widgetConfig(), { headers: { 'Cache-Control': 'public, max-age=60' } }), 'GET'));
export const OPTIONS = preflight('GET');
export const { POST, PUT, PATCH, DELETE } = methodNotAllowed('GET');
