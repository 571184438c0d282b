/** GET /customer-api/v2/conversation/{conversation_id} — the conversation with its messages. */
import { getConversationGet } from '@/lib/api/customer-handlers';
import { methodNotAllowed } from '@/lib/api/handler';

export const dynamic = 'force-dynamic';
export const GET = getConversationGet;
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
