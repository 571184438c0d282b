/** GET /healthz — liveness plus a database ping (503 while the database is away). */
import { apiRoute, jsonResponse } from '@/lib/api/handler';
import { checkHealth } from '@/lib/health';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(async () => jsonResponse(await checkHealth()));
