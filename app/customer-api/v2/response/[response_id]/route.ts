/** GET /customer-api/v2/response/{response_id} — one response of the account, else 404. */
import { getResponseGet } from '@/lib/api/customer-handlers';
import { methodNotAllowed } from '@/lib/api/handler';

export const dynamic = 'force-dynamic';
export const GET = getResponseGet;
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
