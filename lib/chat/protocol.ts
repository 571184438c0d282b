/**
 * The widget chat protocol over socket.io namespace `/widget` — the one module the widget
 * imports types from. Requests go client → server with an acknowledgement callback; the server
 * pushes `event` messages, each with the conversation's sequence number `seq` (strictly
 * increasing per conversation; gaps allowed). A client that reconnects sends
 * `conversation:resume` with the last `seq` it saw and receives exactly the events after it.
 */
import { z } from 'zod';
import type { Author, ConversationEvent, Source, UploadInfo } from '../conversations/shapes';
import { uuidString } from '../core/validation';
import { MAX_QUESTION_CHARS } from '../limits/text';
import { ClientMessageId, ConversationRef, MarkSeenInput, RateInput, VisitorEmailInput } from '../conversations/handoff-contract';

export type { Source, UploadInfo };
/** A client's appearance as GET /api/widget/config serves it (validated by lib/widget-clients/appearance.ts). */
export type { Appearance as WidgetAppearance } from '../widget-clients/appearance';

export const NAMESPACE = '/widget';
export const PROTOCOL_VERSION = 1;
export { MAX_QUESTION_CHARS };

/** PostgreSQL text cannot hold NUL: refused precisely here rather than failing in the insert. */
const NO_NUL = [/^[^\u0000]*$/, 'must not contain NUL characters'] as const;

const Uuid = uuidString();

export const ClientRequests = {
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
    attachments: z.array(Uuid).max(5, 'at most 5 attachments').optional(),
  }),
  /** After a reconnect: the events after last_seq (one page; `more` asks for the next), then live events. */
  'conversation:resume': z.object({ conversation_id: Uuid, last_seq: z.int().min(0) }),
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

export type ClientRequestName = keyof typeof ClientRequests;
export type ClientRequest<N extends ClientRequestName> = z.infer<(typeof ClientRequests)[N]>;

/** Server → client `event` payloads: the conversation's events (lib/conversations/shapes.ts). */
export type ServerEvent = ConversationEvent;

/** Sent once after the connection is accepted. */
export type SessionInfo = {
  protocol: number;
  visitor_id: string;
  token_expires_at: number;
  limits: { upload_max_bytes: number; upload_types: string[]; question_max_chars: number; events_per_10s: number };
  /** Whether the account lets visitors ask for a person ("Talk to a person" in the widget). */
  handoff: { enabled: boolean };
};

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

/**
 * Why a connection is refused (connect_error's `data.code`) or ended (`session:expired`,
 * `session:revoked` and `server:draining` carry it as `code`); the message is for people. The
 * passing ones — `unavailable` (the database is away), `draining`, `too_many_connections` — are
 * worth a retry shortly; the token ones a new token.
 */
export type RefusalCode =
  | 'wrong_namespace'
  | 'client_key_in_address'
  | 'too_many_connections'
  | 'domain_not_allowed'
  | 'token_missing'
  | 'token_invalid'
  | 'token_expired'
  | 'unavailable'
  | 'draining';
export type Refusal = { code: RefusalCode; message: string };

export type Ack<T> = ({ ok: true } & T) | { ok: false; error: { code: string; message: string } };

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
