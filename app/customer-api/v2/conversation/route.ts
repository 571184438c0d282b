/** GET /customer-api/v2/conversation — a page of the account's conversations. */
import { listConversationsGet } from '@/lib/api/customer-handlers';
import { methodNotAllowed } from '@/lib/api/handler';

export const dynamic = 'force-dynamic';
export const GET = listConversationsGet;
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
