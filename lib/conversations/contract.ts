import { z } from 'zod';
import { envelopeSchema, gridjsSchema, listQuerySchema } from '../api/list-query';
import { uuidParam } from '../api/params';
import { Timestamp } from '../api/timestamps';
import { RESPONSE_EXAMPLE } from '../responses/contract';
import { Author, HandledBy } from './shapes';
import { CONVERSATION_SORT_COLUMNS, sortKeysOf } from '../../db/queries/sort-keys';

export const CONVERSATION_SORT_KEYS = sortKeysOf(CONVERSATION_SORT_COLUMNS);

export const ConversationRecord = z
  .object({
    conversation_id: z.guid(),
    id: z.guid().meta({ description: 'Alias of conversation_id' }),
    title: z.string(),
    status: z.string().meta({
      description: 'Open (active), Waiting (handed to a person who has not replied yet), Snoozed or Resolved; imports may bring other values',
    }),
    response_count: z.int().min(0),
    channel_id: z.int(),
    channel_name: z.string(),
    account_id: z.int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    handled_by: HandledBy.meta({ description: 'Who answers: the AI, or a person (human handoff)' }),
    assignee: z.string().nullable().meta({ description: "The assigned member's email" }),
    waiting_since: Timestamp.nullable().meta({ description: 'When it was handed to a person who has not replied yet' }),
    resolved_at: Timestamp.nullable(),
    csat: z.int().min(1).max(5).nullable().meta({ description: "The visitor's rating (1–5) after it was resolved" }),
  })
  .meta({ id: 'Conversation' });
export type ConversationRecord = z.infer<typeof ConversationRecord>;

export const Attachment = z
  .object({
    upload_id: z.guid(),
    filename: z.string(),
    content_type: z.string(),
    size: z.int().min(0),
    url: z.string().meta({
      description: 'Relative link to the file (GET /customer-api/v2/attachments/{upload_id}, same credentials)',
      examples: ['/customer-api/v2/attachments/5f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f'],
    }),
  })
  .meta({ id: 'Attachment' });
export type Attachment = z.infer<typeof Attachment>;

/** GET /attachments/{attachment_id}: the path parameter (an upload id). */
export const AttachmentIdPath = z.object({ attachment_id: uuidParam('Attachment id (the upload_id of a message attachment)') });

/** The 200 body of the attachment download: the stored bytes (described for the OpenAPI document). */
export const AttachmentFile = z.string().meta({ format: 'binary', description: 'The file as stored, with its stored Content-Type' });

export const Message = z
  .object({
    message_id: z.guid(),
    role: z.enum(['user', 'assistant']),
    author: Author.meta({ description: 'visitor, ai, agent (a member), system or note (internal)' }),
    author_name: z.string().nullable().meta({ description: "The member's name, for agent and note" }),
    content: z.string(),
    created_at: Timestamp,
    response_id: z.guid().nullable().meta({ description: 'The response a question or answer belongs to; null for other messages' }),
    attachments: z.array(Attachment),
  })
  .meta({ id: 'Message' });
export type Message = z.infer<typeof Message>;

export const ConversationDetail = ConversationRecord.extend({
  messages: z.array(Message).meta({ description: 'Oldest first; each response gives its question then its answer' }),
}).meta({ id: 'ConversationDetail' });

export type ConversationDetail = z.infer<typeof ConversationDetail>;

/** The documented example conversation, with the messages of RESPONSE_EXAMPLE. */
export const CONVERSATION_EXAMPLE: ConversationRecord = {
  conversation_id: RESPONSE_EXAMPLE.conversation_id,
  id: RESPONSE_EXAMPLE.conversation_id,
  title: 'Password reset',
  status: 'Open',
  response_count: 1,
  channel_id: 7,
  channel_name: 'Website',
  account_id: 1,
  created_at: '2026-01-05 10:00:00',
  updated_at: '2026-01-05 10:01:12',
  handled_by: 'ai',
  assignee: null,
  waiting_since: null,
  resolved_at: null,
  csat: null,
};
export const CONVERSATION_DETAIL_EXAMPLE: ConversationDetail = {
  ...CONVERSATION_EXAMPLE,
  messages: [
    {
      message_id: 'c1a4e7d2-5b3f-4a8e-9c6d-1e2f3a4b5c6d',
      role: 'user',
      author: 'visitor',
      author_name: null,
      content: RESPONSE_EXAMPLE.question,
      created_at: RESPONSE_EXAMPLE.created_at,
      response_id: RESPONSE_EXAMPLE.response_id,
      attachments: [],
    },
    {
      message_id: 'd2b5f8e3-6c4a-4b9f-8d7e-2f3a4b5c6d7e',
      role: 'assistant',
      author: 'ai',
      author_name: null,
      content: RESPONSE_EXAMPLE.answer,
      created_at: RESPONSE_EXAMPLE.created_at,
      response_id: RESPONSE_EXAMPLE.response_id,
      attachments: [],
    },
  ],
};

export const ConversationListQuery = listQuerySchema(CONVERSATION_SORT_KEYS, false);
export const ConversationIdPath = z.object({ conversation_id: uuidParam('Conversation id') });

/** The 200 bodies: the record (or page), or its format=gridjs form. */
export const ConversationCells = gridjsSchema(ConversationRecord, 'ConversationCells');
export const ConversationPage = envelopeSchema(ConversationRecord, 'ConversationPage').or(envelopeSchema(ConversationCells, 'ConversationCellsPage'));
export const ConversationDetailBody = ConversationDetail.or(gridjsSchema(ConversationDetail, 'ConversationDetailCells'));
