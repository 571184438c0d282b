/** GET /customer-api/v2/conversation — a page of the account's conversations (operation listConversations). */
import { routeHandlers } from '@/lib/customer-api/route';

export const dynamic = 'force-dynamic';
export const { GET, POST, PUT, PATCH, DELETE, OPTIONS } = routeHandlers('/conversation');
