/**
 * The shapes of a conversation that cross the wire to the widget: its events and the sources an
 * answer used. zod only (lib/chat/protocol.ts re-exports the types; the widget imports those).
 */
import { z } from 'zod';

/** A passage an answer used (docs/contracts.md §12): `title` is the document's own title, never a file name. */
export const Source = z.object({ document_id: z.string(), title: z.string(), passage: z.string() });
export type Source = z.infer<typeof Source>;

export const UploadInfo = z.object({ upload_id: z.string(), filename: z.string(), content_type: z.string(), size: z.int().min(0) });
export type UploadInfo = z.infer<typeof UploadInfo>;

/**
 * Who wrote a message. Today's messages are the two halves of a response (`visitor`, `ai`);
 * `agent` (a member's reply), `system` and `note` (internal, never shown to visitors) are next.
 */
export const Author = z.enum(['visitor', 'ai', 'agent', 'system', 'note']);
export type Author = z.infer<typeof Author>;

/**
 * A conversation's events, each with its `seq` (strictly increasing per conversation). Stored
 * ones are read back on resume; `answer.delta` is live only (lib/conversations/events.ts).
 */
export type ConversationEvent =
  | { type: 'question'; conversation_id: string; seq: number; client_message_id: string; response_id: string; text: string; attachments: UploadInfo[] }
  | { type: 'answer.delta'; conversation_id: string; seq: number; client_message_id: string; response_id: string; text: string }
  | { type: 'answer.done'; conversation_id: string; seq: number; client_message_id: string; response_id: string; answer: string; sources: Source[] }
  | { type: 'answer.error'; conversation_id: string; seq: number; client_message_id: string; response_id: string; message: string }
  | { type: 'feedback'; conversation_id: string; seq: number; response_id: string; likes: number; dislikes: number }
  | { type: 'comment'; conversation_id: string; seq: number; response_id: string; comments: number };

/** An event before it has its seq. */
export type EventDraft = ConversationEvent extends infer E ? (E extends ConversationEvent ? Omit<E, 'seq'> : never) : never;
