/** GET /customer-api/v2/conversation/{conversation_id} — the conversation with its messages. */
import { customerGet, pathId, singleFormat } from '@/lib/api/customer-route';
import { methodNotAllowed } from '@/lib/api/handler';
import { ConversationIdPath } from '@/lib/conversations/contract';
import { getConversationWithMessages } from '@/lib/conversations/service';

export const dynamic = 'force-dynamic';
export const GET = customerGet<{ conversation_id: string }>((p, params, query) =>
  getConversationWithMessages(p.accountId, pathId(ConversationIdPath, params, 'conversation').conversation_id, singleFormat(query)));
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
