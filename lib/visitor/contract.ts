/**
 * The visitor's operations (lib/visitor/service.ts), whatever door they come through: their requests
 * (zod, the single source of their types and checks) and what they answer. The widget protocol
 * (lib/chat/protocol.ts) re-exports them under its own names.
 */
import { z } from 'zod';
import { uuidString } from '../core/validation';
import { MAX_MESSAGE_ATTACHMENTS, MAX_QUESTION_CHARS } from '../limits/text';
import { ClientMessageId, ConversationRef, MarkSeenInput, RateInput, VisitorEmailInput } from '../conversations/handoff-contract';
import type { Author, Source } from '../conversations/shapes';

/** Who asks: the account, the visitor, the channel of their conversations, and the widget client they came through (null by mail). */
export type Visitor = { accountId: number; visitorId: string; clientId: string | null; channelId: number };

/** PostgreSQL text cannot hold NUL: refused precisely here rather than failing in the insert. */
export const NO_NUL = [/^[^\u0000]*$/, 'must not contain NUL characters'] as const;

export const Uuid = uuidString();

export const VisitorRequests = {
  /** Ask a question; no conversation_id starts a new conversation. Retries reuse client_message_id. */
  ask: z.object({
    conversation_id: Uuid.optional(),
    client_message_id: ClientMessageId,
    text: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_QUESTION_CHARS, `must be at most ${MAX_QUESTION_CHARS} characters`)
      .regex(...NO_NUL),
    attachments: z.array(Uuid).max(MAX_MESSAGE_ATTACHMENTS, `at most ${MAX_MESSAGE_ATTACHMENTS} attachments`).optional(),
  }),
  /** The visitor's own conversation, as messages: the newest page, or the page before a response id. */
  history: z.object({ conversation_id: Uuid, before: Uuid.optional() }),
  /** Like or dislike an answer; the same value again removes it (toggle). */
  feedback: z.object({ response_id: Uuid, value: z.enum(['like', 'dislike']) }),
  comment: z.object({
    response_id: Uuid,
    text: z
      .string()
      .trim()
      .min(1)
      .max(2000)
      .regex(...NO_NUL),
  }),
  /** The visitor pressed "Talk to a person" (docs/contracts.md §14); idempotent while a person is asked or handles it. */
  'handoff:request': ConversationRef,
  /** After "Resolve": 1–5 once, with an optional comment. */
  rating: RateInput,
  /** Away mode: where a member's reply the visitor has not seen is mailed. */
  'visitor:email': VisitorEmailInput,
  /** The widget showed these member messages (every one without `message_ids`): they are not mailed. */
  'messages:seen': MarkSeenInput,
} as const;

export type VisitorRequestName = keyof typeof VisitorRequests;
export type VisitorRequest<N extends VisitorRequestName> = z.infer<(typeof VisitorRequests)[N]>;

/** `ask`'s acknowledgement; `handled_by: 'human'` says a person has the conversation (the message is stored for them, no AI answer follows). */
export type AskAck = { conversation_id: string; client_message_id: string; response_id: string; duplicate: boolean; handled_by?: 'ai' | 'human' };

/** Where a handoff stands for the visitor: a person is promised only when `available`. */
export type HandoffAck = {
  conversation_id: string;
  status: string;
  handled_by: 'ai' | 'human';
  available: boolean;
  expected_wait_seconds: number | null;
  away: { until: string | null; text: string } | null;
};

export type HistoryMessage = {
  message_id: string;
  role: 'user' | 'assistant';
  /** Who wrote it (2.1): `visitor`, `ai`, `agent` (a member, named by author_name) or `system`; never `note`. */
  author: Author;
  author_name: string | null;
  /** An AI answer that declined (no relevant passage): the widget offers "Talk to a person" under it. */
  declined?: boolean;
  content: string;
  created_at: string;
  /** The answer's response; a message that is not half of one (author agent, system, or visitor while a person handles it) gives its own id. */
  response_id: string;
  error: string | null;
  sources: Source[];
  likes: number;
  dislikes: number;
  mine: 'like' | 'dislike' | null;
  /** A question's attached files (an answer has none). */
  attachments: Array<{ filename: string; content_type: string; size: number }>;
};
