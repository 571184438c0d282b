/** GET /customer-api/v2/openapi.json — the public OpenAPI 3.1 document (CORS open), derived from lib/customer-api/operations.ts. */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/openapi.json');
