/** GET /customer-api/v2/conversation — a page of the account's conversations. */
import { customerGet } from '@/lib/api/customer-route';
import { methodNotAllowed } from '@/lib/api/handler';
import { listConversationsPage } from '@/lib/conversations/service';

export const dynamic = 'force-dynamic';
export const GET = customerGet((p, _params, query) => listConversationsPage(p.accountId, query));
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
