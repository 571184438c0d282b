import { onReadDb, type ReadTarget } from '../../db/read';
import { getDb, openDb } from '../../db/client';
import {
  getConversationWithTranscript,
  listConversationsWithCount,
  type ConversationFilter,
  type ConversationRow,
  type ConversationWithTranscriptRow,
} from '../../db/queries/conversations';
import { AppError } from '../core/errors';
import { gridjsCells, pageWindowOf, parseListQuery, parseSingleQuery, recordsEnvelope, type Envelope, type ListQuery } from '../api/list-query';
import { messagesOf, toApiMessage } from './messages';
import { ConversationListQuery, type CONVERSATION_SORT_KEYS, type ConversationRecord, type Message } from './contract';

type SortKey = (typeof CONVERSATION_SORT_KEYS)[number];

export function toConversationRecord(c: ConversationRow): ConversationRecord {
  return {
    conversation_id: c.id,
    id: c.id,
    title: c.title,
    status: c.status,
    response_count: c.response_count,
    channel_id: c.channel_id,
    channel_name: c.channel_name,
    account_id: c.account_id,
    created_at: c.created_at,
    updated_at: c.updated_at,
    handled_by: c.handled_by,
    assignee: c.assignee,
    waiting_since: c.waiting_since,
    resolved_at: c.resolved_at,
    csat: c.csat,
  };
}

/** The filter of a parsed list (or export) query: one mapping for both. */
export function conversationFilterOf(q: ListQuery<string>, channelIds: number[]): ConversationFilter {
  return { channelIds, query: q.query, updatedSince: q.updated_since, status: q.status, handledBy: q.handled_by };
}

export async function listConversationsPage(accountId: number, params: URLSearchParams, linkPath: string, target: ReadTarget): Promise<Envelope<unknown>> {
  const { query: q, channelIds } = parseListQuery<SortKey>(params, ConversationListQuery);
  const { count, rows } = await onReadDb(target, (db) =>
    listConversationsWithCount(db, accountId, conversationFilterOf(q, channelIds), q.order_by ?? 'created_at', pageWindowOf(q)),
  );
  return recordsEnvelope(linkPath, q, count, rows.map(toConversationRecord));
}

/** A conversation's messages as the Customer API gives them (GET /conversation/{id}, the export), notes included. */
export function apiMessagesOf(c: Partial<Pick<ConversationWithTranscriptRow, 'transcript' | 'attachments' | 'stored'>>): Message[] {
  return messagesOf(c.transcript ?? [], c.attachments ?? [], c.stored ?? []).map(toApiMessage);
}

/** The conversation with its messages, oldest first: each response's question, then its answer. */
export async function getConversationWithMessages(accountId: number, conversationId: string, params: URLSearchParams) {
  const { format } = parseSingleQuery(params);
  const conversation = await getConversationWithTranscript(openDb() ?? (await getDb()), accountId, conversationId);
  if (!conversation) throw new AppError('not_found', `No conversation with id ${conversationId}.`);
  const messages = apiMessagesOf(conversation);
  const detail = { ...toConversationRecord(conversation), messages };
  return format === 'gridjs' ? gridjsCells(detail) : detail;
}
