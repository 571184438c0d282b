/** GET /customer-api/v2/response/{response_id} — one response (operation getResponse). */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/response/{response_id}');
