/** GET /customer-api/v2/response/export — every matching response, streamed as NDJSON or CSV (operation exportResponses). */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/response/export');
