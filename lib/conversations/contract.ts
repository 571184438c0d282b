import { z } from 'zod';
import { listQuerySchema } from '../api/list-query';
import { uuidParam } from '../api/params';
import { Timestamp } from '../api/timestamps';

export const CONVERSATION_SORT_KEYS = [
  'created_at', 'conversation_id', 'id', 'channel_id', 'updated_at', 'response_count',
] as const;

export const ConversationRecord = z.object({
  conversation_id: z.uuid(),
  id: z.uuid().meta({ description: 'Alias of conversation_id' }),
  title: z.string(),
  status: z.string().meta({ description: 'Open for live conversations; imports may bring other values' }),
  response_count: z.int().min(0),
  channel_id: z.int(),
  channel_name: z.string(),
  account_id: z.int(),
  created_at: Timestamp,
  updated_at: Timestamp,
}).meta({ id: 'Conversation' });
export type ConversationRecord = z.infer<typeof ConversationRecord>;

export const Attachment = z.object({
  upload_id: z.uuid(), filename: z.string(), content_type: z.string(), size: z.int().min(0),
}).meta({ id: 'Attachment' });

export const Message = z.object({
  message_id: z.uuid(),
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  created_at: Timestamp,
  response_id: z.uuid(),
  attachments: z.array(Attachment),
}).meta({ id: 'Message' });
export type Message = z.infer<typeof Message>;

export const ConversationDetail = ConversationRecord.extend({
  messages: z.array(Message).meta({ description: 'Oldest first; each response gives its question then its answer' }),
}).meta({ id: 'ConversationDetail' });

export const ConversationListQuery = listQuerySchema(CONVERSATION_SORT_KEYS, false);
export const ConversationIdPath = z.object({ conversation_id: uuidParam('Conversation id') });
