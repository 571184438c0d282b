/** GET /customer-api/v2/attachments/{attachment_id} — an attachment's bytes, streamed (operation getAttachment). */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/attachments/{attachment_id}');
