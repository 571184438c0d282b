/** GET /docs/api/assets/{file} — Swagger UI's files from our own origin (a fixed list; others 404). */
import { apiRoute } from '@/lib/api/handler';
import { docsAsset } from '@/lib/customer-api/docs/page';

export const dynamic = 'force-dynamic';
export const GET = apiRoute<{ file: string }>(async (_req, params) => docsAsset(params.file));
