/** GET /customer-api/v2/openapi.json — the public OpenAPI 3.1 document, generated from the zod schemas. */
import { apiRoute, jsonResponse, methodNotAllowed } from '@/lib/api/handler';
import { openApiDocument } from '@/lib/api/openapi';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(async () => jsonResponse(openApiDocument(), { headers: { 'Cache-Control': 'public, max-age=300' } }));
export const { POST, PUT, PATCH, DELETE, OPTIONS } = methodNotAllowed('GET, HEAD');
