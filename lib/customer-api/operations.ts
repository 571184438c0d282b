import type { ReadTarget } from '../../db/read';
import { z } from 'zod';
import type { CustomerPrincipal } from '../auth/customer-api';
import {
  AttachmentFile,
  AttachmentIdPath,
  CONVERSATION_DETAIL_EXAMPLE,
  CONVERSATION_EXAMPLE,
  ConversationDetailBody,
  ConversationIdPath,
  ConversationListQuery,
  ConversationPage,
} from '../conversations/contract';
import { getConversationWithMessages, listConversationsPage } from '../conversations/service';
import {
  RESPONSE_DETAIL_EXAMPLE,
  RESPONSE_EXAMPLE,
  ResponseBody,
  ResponseIdPath,
  ResponseListQuery,
  ResponsePage,
  SingleRecordQuery,
} from '../responses/contract';
import { getResponse, listResponsesPage } from '../responses/service';
import { ConversationExportLine, ConversationExportQuery, ResponseExportLine, ResponseExportQuery } from '../export/contract';
import { exportConversations, exportResponses } from '../export/service';
import { attachmentDownload } from '../uploads/service';
import { INSIGHTS_EXAMPLE, InsightsQuery, InsightsRecord } from '../insights/contract';
import { getInsights } from '../insights/service';
import { API_BASE, ATTACHMENT_PATH, LIST_PATHS } from '../api/links';

export { API_BASE };

/** An API key's heavy reads may go to the read replica; a dashboard session reads its own writes on the primary (CONTRACTS §19). */
function readTargetOf(principal: CustomerPrincipal): ReadTarget {
  return principal.via === 'api_key' ? 'replica' : 'primary';
}

export type OperationContext<P> = {
  principal: CustomerPrincipal;
  /** Path parameters, validated by the operation's `pathParams` (a mismatch is a 404). */
  params: P;
  query: URLSearchParams;
  /** The operation's own path (API_BASE + path), from which list links are built. */
  selfPath: string;
};

type Example = { params?: Record<string, string>; query?: Record<string, string>; response: unknown };

/**
 * One Customer API operation: everything the route files, the direct door, the OpenAPI document,
 * the list links and the tests derive from (CONTRIBUTING.md (style)). `path` is relative to API_BASE, with
 * `{name}` for a path parameter.
 */
export type CustomerOperation = {
  operationId: string;
  method: 'GET';
  path: `/${string}`;
  tag: 'Responses' | 'Conversations' | 'Attachments' | 'Insights';
  summary: string;
  description: string;
  pathParams?: z.ZodObject;
  /** The documented query parameters; the service parses them with the same schema. */
  query: z.ZodObject;
  /** The 200 body. */
  response: z.ZodType;
  /**
   * A streamed download: `run` answers a Response. 'records' (docs/contracts.md §10): `response` is one
   * NDJSON line; 'file': the stored bytes of one file, `response` describes them.
   */
  download?: 'records' | 'file';
  /** Present when a path id may name nothing: the 404's description. */
  notFound?: string;
  /** Documented and run by the test suite against a real server (tests/api/openapi.test.ts). */
  example: Example;
  run: (ctx: OperationContext<Record<string, string>>) => Promise<unknown>;
};

function operation<P extends z.ZodObject | undefined = undefined>(
  op: Omit<CustomerOperation, 'run' | 'pathParams'> & {
    pathParams?: P;
    run: (ctx: OperationContext<P extends z.ZodObject ? z.output<P> : Record<string, never>>) => Promise<unknown>;
  },
): CustomerOperation {
  return op as unknown as CustomerOperation;
}

/** An operation without query parameters (unknown parameters are ignored, docs/contracts.md §4). */
const NoQuery = z.object({});
/** The documented attachment id (tests/api/openapi.test.ts stores a file under it to run the example). */
export const ATTACHMENT_EXAMPLE_ID = '5f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f';

const page = <T>(record: T) => ({ count: 1, next: null, previous: null, results: [record] });

export const CUSTOMER_OPERATIONS: readonly CustomerOperation[] = [
  operation({
    operationId: 'listResponses',
    method: 'GET',
    path: LIST_PATHS.responses,
    tag: 'Responses',
    summary: 'List responses',
    description:
      "A page of the account's responses (question and answer pairs), newest first by default. " +
      'Filters combine; `query` searches question and answer. Ordering is total: ties are broken by id.',
    query: ResponseListQuery,
    response: ResponsePage,
    example: { query: { query: 'password', order_by: 'likes', sort: 'DESC', resultsPerPage: '5' }, response: page(RESPONSE_EXAMPLE) },
    run: ({ principal, query, selfPath }) => listResponsesPage(principal.accountId, query, selfPath, readTargetOf(principal)),
  }),
  // Before '/response/{response_id}': a literal segment wins over a path parameter.
  operation({
    operationId: 'exportResponses',
    method: 'GET',
    path: '/response/export',
    tag: 'Responses',
    summary: 'Export responses',
    description:
      'Every response the list returns for the same filters, search and sort, in the same order, all ' +
      'pages, streamed from one consistent snapshot: NDJSON (one record per line, default) or CSV (`format=csv`, ' +
      'RFC 4180, header row). Sent as an attachment `responses-<UTC yyyymmdd-hhmmss>.<ext>`.',
    query: ResponseExportQuery,
    response: ResponseExportLine,
    download: 'records',
    example: { query: { query: 'password', order_by: 'likes', sort: 'DESC' }, response: RESPONSE_EXAMPLE },
    run: ({ principal, query }) => exportResponses(principal.accountId, query, readTargetOf(principal)),
  }),
  operation({
    operationId: 'getResponse',
    method: 'GET',
    path: '/response/{response_id}',
    tag: 'Responses',
    summary: 'Get one response',
    description:
      "One response of the account with `comment_list`, its visitors' comments oldest first. An unknown id, a malformed id and another account's id are the same 404.",
    pathParams: ResponseIdPath,
    query: SingleRecordQuery,
    response: ResponseBody,
    notFound: 'Unknown id, malformed id, or an id of another account',
    example: { params: { response_id: RESPONSE_EXAMPLE.response_id }, response: RESPONSE_DETAIL_EXAMPLE },
    run: ({ principal, params, query }) => getResponse(principal.accountId, params.response_id, query),
  }),
  operation({
    operationId: 'listConversations',
    method: 'GET',
    path: LIST_PATHS.conversations,
    tag: 'Conversations',
    summary: 'List conversations',
    description:
      "A page of the account's conversations, newest first by default. `query` searches the title " +
      'and the channel name. Ordering is total: ties are broken by id.',
    query: ConversationListQuery,
    response: ConversationPage,
    example: { query: { order_by: 'response_count', sort: 'DESC', resultsPerPage: '10' }, response: page(CONVERSATION_EXAMPLE) },
    run: ({ principal, query, selfPath }) => listConversationsPage(principal.accountId, query, selfPath, readTargetOf(principal)),
  }),
  operation({
    operationId: 'exportConversations',
    method: 'GET',
    path: '/conversation/export',
    tag: 'Conversations',
    summary: 'Export conversations',
    description:
      'Every conversation the list returns for the same filters, search and sort, in the same order, all ' +
      'pages, streamed from one consistent snapshot: NDJSON (default) or CSV (`format=csv`). `include=messages` ' +
      "adds each conversation's `messages` as in GET /conversation/{conversation_id} (NDJSON only). Sent as an " +
      'attachment `conversations-<UTC yyyymmdd-hhmmss>.<ext>`.',
    query: ConversationExportQuery,
    response: ConversationExportLine,
    download: 'records',
    example: { query: { order_by: 'response_count', sort: 'DESC', include: 'messages' }, response: CONVERSATION_DETAIL_EXAMPLE },
    run: ({ principal, query }) => exportConversations(principal.accountId, query, readTargetOf(principal)),
  }),
  operation({
    operationId: 'getConversation',
    method: 'GET',
    path: '/conversation/{conversation_id}',
    tag: 'Conversations',
    summary: 'Get one conversation with its messages',
    description:
      'The conversation record plus `messages`, oldest first: each response gives a user message (its ' +
      'question) immediately followed by an assistant message (its answer).',
    pathParams: ConversationIdPath,
    query: SingleRecordQuery,
    response: ConversationDetailBody,
    notFound: 'Unknown id, malformed id, or an id of another account',
    example: { params: { conversation_id: CONVERSATION_EXAMPLE.conversation_id }, response: CONVERSATION_DETAIL_EXAMPLE },
    run: ({ principal, params, query }) => getConversationWithMessages(principal.accountId, params.conversation_id, query),
  }),
  operation({
    operationId: 'getAttachment',
    method: 'GET',
    path: ATTACHMENT_PATH,
    tag: 'Attachments',
    summary: 'Download an attachment',
    description:
      'The bytes of a file a visitor attached to a message, streamed with its stored `Content-Type`, ' +
      '`Content-Disposition: attachment` (with `filename*`, the exact UTF-8 name) and `X-Content-Type-Options: nosniff`. ' +
      'Each attachment object of a message carries this link as `url`. An unknown id, a malformed id and another ' +
      "account's id are the same 404.",
    pathParams: AttachmentIdPath,
    query: NoQuery,
    response: AttachmentFile,
    download: 'file',
    notFound: 'Unknown id, malformed id, an upload still being received, or an id of another account',
    example: { params: { attachment_id: ATTACHMENT_EXAMPLE_ID }, response: 'Order 4711 was shipped on Monday.\n' },
    run: ({ principal, params }) => attachmentDownload(principal.accountId, params.attachment_id),
  }),
  operation({
    operationId: 'getInsights',
    method: 'GET',
    path: '/insights',
    tag: 'Insights',
    summary: 'Resolution, handoff and satisfaction figures',
    description:
      "The figures of the dashboard's Insights page for a window of UTC days (both inclusive, at most 366) and " +
      'optionally one channel: conversations started in the window and how they went, and the answers given in it. ' +
      'Rates are 0–1; medians (whole seconds) and CSAT means are null when there is nothing to measure. `series` has ' +
      'one entry per day of the window.',
    query: InsightsQuery,
    response: InsightsRecord,
    example: { query: { from: INSIGHTS_EXAMPLE.from, to: INSIGHTS_EXAMPLE.to }, response: INSIGHTS_EXAMPLE },
    run: ({ principal, query }) => getInsights(principal.accountId, query, readTargetOf(principal)),
  }),
];

export const TAGS = [
  { name: 'Responses', description: 'Questions and the answers the bot gave, with their feedback counts' },
  { name: 'Conversations', description: 'Conversations and their transcripts' },
  { name: 'Attachments', description: 'Files visitors attached to their messages' },
  { name: 'Insights', description: 'How conversations went: resolution, handoffs, satisfaction, declined answers' },
];

/** "GET /customer-api/v2/response", … : what an unknown path's 404 names. */
export function operationList(): string[] {
  return CUSTOMER_OPERATIONS.map((op) => `${op.method} ${API_BASE}${op.path}`);
}
