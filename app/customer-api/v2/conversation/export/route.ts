/** GET /customer-api/v2/conversation/export — every matching conversation, streamed as NDJSON or CSV (operation exportConversations). */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/conversation/export');
