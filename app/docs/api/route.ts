/** GET /docs/api — the readable Customer API reference (self-hosted Swagger UI over openapi.json). */
import { apiRoute } from '@/lib/api/handler';
import { docsPageHtml } from '@/lib/customer-api/docs/page';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(
  async () =>
    new Response(docsPageHtml(), {
      headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'public, max-age=300' },
    }),
);
