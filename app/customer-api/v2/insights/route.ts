/** GET /customer-api/v2/insights — resolution, handoff and satisfaction figures (operation getInsights). */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/insights');
