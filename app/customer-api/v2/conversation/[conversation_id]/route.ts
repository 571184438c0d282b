/** GET /customer-api/v2/conversation/{conversation_id} — the conversation with its messages (operation getConversation). */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/conversation/{conversation_id}');
