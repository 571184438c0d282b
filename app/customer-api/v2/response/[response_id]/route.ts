/** GET /customer-api/v2/response/{response_id} — one response of the account, else 404. */
import { customerGet, pathId, singleFormat } from '@/lib/api/customer-route';
import { methodNotAllowed } from '@/lib/api/handler';
import { ResponseIdPath } from '@/lib/responses/contract';
import { getResponse } from '@/lib/responses/service';

export const dynamic = 'force-dynamic';
export const GET = customerGet<{ response_id: string }>((p, params, query) =>
  getResponse(p.accountId, pathId(ResponseIdPath, params, 'response').response_id, singleFormat(query)));
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
