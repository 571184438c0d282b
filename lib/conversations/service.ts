import { getDb, openDb } from '../../db/client';
import { getConversationWithTranscript, listConversationsWithCount, type ConversationFilter, type ConversationRow, type ConversationWithTranscriptRow } from '../../db/queries/conversations';
import { AppError } from '../api/errors';
import { attachmentUrl } from '../api/links';
import { envelope, gridjsCells, offsetOf, parseListQuery, parseSingleQuery, type Envelope, type ListQuery } from '../api/list-query';
import { ConversationListQuery, CONVERSATION_SORT_KEYS, type ConversationRecord, type Message } from './contract';

type SortKey = (typeof CONVERSATION_SORT_KEYS)[number];

export function toConversationRecord(c: ConversationRow): ConversationRecord {
  return {
    conversation_id: c.id, id: c.id, title: c.title, status: c.status, response_count: c.response_count,
    channel_id: c.channel_id, channel_name: c.channel_name, account_id: c.account_id,
    created_at: c.created_at, updated_at: c.updated_at,
  };
}

/** The filter of a parsed list (or export) query: one mapping for both. */
export function conversationFilterOf(q: ListQuery<string>, channelIds: number[]): ConversationFilter {
  return { channelIds, query: q.query, updatedSince: q.updated_since };
}

export async function listConversationsPage(accountId: number, params: URLSearchParams, linkPath: string): Promise<Envelope<unknown>> {
  const { query: q, channelIds } = parseListQuery<SortKey>(params, ConversationListQuery);
  const db = openDb() ?? await getDb();
  const filter = conversationFilterOf(q, channelIds);
  const offset = offsetOf(q);
  const { count, rows: page } = await listConversationsWithCount(db, accountId, filter, q.order_by ?? 'created_at',
    offset === null ? null : { limit: q.resultsPerPage, offset, direction: q.sort ?? 'DESC' });
  const records = page.map(toConversationRecord);
  return envelope(linkPath, q, count, q.format === 'gridjs' ? records.map(gridjsCells) : records);
}

/** A conversation's messages, oldest first: each response's question, then its answer, with their attachments. */
export function messagesOf(transcript: ConversationWithTranscriptRow['transcript'], attachments: ConversationWithTranscriptRow['attachments']): Message[] {
  const byMessage = new Map<string, Message['attachments']>();
  for (const a of attachments) {
    if (!a.message_id) continue;
    const list = byMessage.get(a.message_id) ?? [];
    list.push({ upload_id: a.id, filename: a.filename, content_type: a.content_type, size: a.size, url: attachmentUrl(a.id) });
    byMessage.set(a.message_id, list);
  }
  return transcript.flatMap((r) => [
    { message_id: r.question_message_id, role: 'user' as const, content: r.question, created_at: r.created_at,
      response_id: r.id, attachments: byMessage.get(r.question_message_id) ?? [] },
    { message_id: r.answer_message_id, role: 'assistant' as const, content: r.answer, created_at: r.created_at,
      response_id: r.id, attachments: byMessage.get(r.answer_message_id) ?? [] },
  ]);
}

/** The conversation with its messages, oldest first: each response's question, then its answer. */
export async function getConversationWithMessages(accountId: number, conversationId: string, params: URLSearchParams) {
  const { format } = parseSingleQuery(params);
  const conversation = await getConversationWithTranscript(openDb() ?? await getDb(), accountId, conversationId);
  if (!conversation) throw new AppError('not_found', `No conversation with id ${conversationId}.`);
  const messages = messagesOf(conversation.transcript, conversation.attachments);
  const detail = { ...toConversationRecord(conversation), messages };
  return format === 'gridjs' ? gridjsCells(detail) : detail;
}
