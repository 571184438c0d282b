/** Any other path under /customer-api/v2: a problem+json 404 naming the operations that exist. */
import { unknownPathRouteHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = unknownPathRouteHandlers();
