/** GET /healthz — liveness (lib/health.ts): 200 while the process works, also while PostgreSQL is away. */
import { apiRoute, jsonResponse } from '@/lib/api/handler';
import { checkHealth } from '@/lib/health';

export const dynamic = 'force-dynamic';
export const GET = apiRoute(async () => jsonResponse(await checkHealth()));
