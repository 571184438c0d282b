/** GET /customer-api/v2/response — a page of the account's responses. */
import { listResponsesGet } from '@/lib/api/customer-handlers';
import { methodNotAllowed } from '@/lib/api/handler';

export const dynamic = 'force-dynamic';
export const GET = listResponsesGet;
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
