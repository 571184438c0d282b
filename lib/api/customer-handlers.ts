import { ConversationIdPath } from '../conversations/contract';
import { getConversationWithMessages, listConversationsPage } from '../conversations/service';
import { ResponseIdPath } from '../responses/contract';
import { getResponse, listResponsesPage } from '../responses/service';
import { customerGet, pathId, singleFormat } from './customer-route';

/**
 * The four Customer API reads. The route files in app/customer-api/v2 export these, and
 * lib/server/http.ts calls the very same handlers directly for API-key requests (skipping
 * Next's routing, which costs more than the query on page 1).
 */
export const listResponsesGet = customerGet((p, _params, query) => listResponsesPage(p.accountId, query));

export const getResponseGet = customerGet<{ response_id: string }>((p, params, query) =>
  getResponse(p.accountId, pathId(ResponseIdPath, params, 'response').response_id, singleFormat(query)));

export const listConversationsGet = customerGet((p, _params, query) => listConversationsPage(p.accountId, query));

export const getConversationGet = customerGet<{ conversation_id: string }>((p, params, query) =>
  getConversationWithMessages(p.accountId, pathId(ConversationIdPath, params, 'conversation').conversation_id, singleFormat(query)));

type AnyHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** Path → handler and its route parameters, for the direct door. */
export function matchCustomerRoute(pathname: string): { handler: AnyHandler; params: Record<string, string> } | null {
  const m = /^\/customer-api\/v2\/(response|conversation)(?:\/([^/]+))?\/?$/.exec(pathname);
  if (!m) return null;
  let id: string | undefined;
  try { id = m[2] === undefined ? undefined : decodeURIComponent(m[2]); } catch { return null; }
  if (m[1] === 'response') {
    return id === undefined ? { handler: listResponsesGet as AnyHandler, params: {} } : { handler: getResponseGet as AnyHandler, params: { response_id: id } };
  }
  return id === undefined ? { handler: listConversationsGet as AnyHandler, params: {} } : { handler: getConversationGet as AnyHandler, params: { conversation_id: id } };
}
