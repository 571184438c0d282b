/** GET /customer-api/v2/openapi.json — the public OpenAPI 3.1 document (CORS open), derived from lib/api/operations.ts. */
import { routeHandlers } from '@/lib/api/customer-route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/openapi.json');
