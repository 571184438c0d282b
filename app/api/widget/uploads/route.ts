/** POST /api/widget/uploads — one visitor file (multipart), streamed into storage under every limit, typed by its bytes. */
import { jsonResponse, methodNotAllowed } from '@/lib/api/handler';
import { preflight, widgetRoute, withCors } from '@/lib/api/widget-route';
import { receiveUpload } from '@/lib/uploads/receive';

export const dynamic = 'force-dynamic';
export const POST = widgetRoute(async (req) => withCors(jsonResponse(await receiveUpload(req), { status: 201 }), 'POST'));
export const OPTIONS = preflight('POST');
export const { GET, PUT, PATCH, DELETE } = methodNotAllowed('POST');
