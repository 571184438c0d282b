/**
 * The widget chat protocol over socket.io namespace `/widget` — the one module the widget
 * imports types from. Requests go client → server with an acknowledgement callback; the server
 * pushes `event` messages, each with the conversation's sequence number `seq` (strictly
 * increasing per conversation; gaps allowed). A client that reconnects sends
 * `conversation:resume` with the last `seq` it saw and receives exactly the events after it.
 */
import { z } from 'zod';
import type { ConversationEvent, Source, UploadInfo } from '../conversations/shapes';
import { MAX_QUESTION_CHARS } from '../limits/text';
import { Uuid, VisitorRequests } from '../visitor/contract';

export type { Source, UploadInfo };
/** A client's appearance as GET /api/widget/config serves it (validated by lib/widget-clients/appearance.ts). */
export type { Appearance as WidgetAppearance } from '../widget-clients/appearance';

export const NAMESPACE = '/widget';
export const PROTOCOL_VERSION = 1;
export { MAX_QUESTION_CHARS };

export type { AskAck, HandoffAck, HistoryMessage } from '../visitor/contract';

/** Every request a widget may send: the visitor's operations, and resuming after a reconnect. */
export const ClientRequests = {
  ...VisitorRequests,
  /** After a reconnect: the events after last_seq (one page; `more` asks for the next), then live events. */
  'conversation:resume': z.object({ conversation_id: Uuid, last_seq: z.int().min(0) }),
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
