/** GET /customer-api/v2/response — a page of the account's responses. */
import { customerGet } from '@/lib/api/customer-route';
import { methodNotAllowed } from '@/lib/api/handler';
import { listResponsesPage } from '@/lib/responses/service';

export const dynamic = 'force-dynamic';
export const GET = customerGet((p, _params, query) => listResponsesPage(p.accountId, query));
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
