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
 * Who wrote a message: the two halves of a response (`visitor`, `ai`), or a stored message
 * (docs/decisions/handoff.md): `visitor` while a person handles it, `agent` (a member's reply),
 * `system` ("<name> joined"), `note` (internal, never shown to visitors).
 */
export const Author = z.enum(['visitor', 'ai', 'agent', 'system', 'note']);
export type Author = z.infer<typeof Author>;

/** Who answers a conversation: the AI, or a person (docs/contracts.md §14 `handled_by`). */
export const HandledBy = z.enum(['ai', 'human']);
export type HandledBy = z.infer<typeof HandledBy>;

/**
 * A conversation's events, each with its `seq` (strictly increasing per conversation). Stored
 * ones are read back on resume; `answer.delta` and `agent.typing` are live only
 * (lib/conversations/events.ts). `answer.done`'s `declined`: the engine gave the "no answer" text
 * (the widget offers "Talk to a person"). The handoff events (docs/decisions/handoff.md) never
 * carry notes.
 */
export type ConversationEvent =
  | { type: 'question'; conversation_id: string; seq: number; client_message_id: string; response_id: string; text: string; attachments: UploadInfo[] }
  | { type: 'answer.delta'; conversation_id: string; seq: number; client_message_id: string; response_id: string; text: string }
  | {
      type: 'answer.done';
      conversation_id: string;
      seq: number;
      client_message_id: string;
      response_id: string;
      answer: string;
      sources: Source[];
      declined?: boolean;
    }
  | { type: 'answer.error'; conversation_id: string; seq: number; client_message_id: string; response_id: string; message: string }
  | { type: 'feedback'; conversation_id: string; seq: number; response_id: string; likes: number; dislikes: number }
  | { type: 'comment'; conversation_id: string; seq: number; response_id: string; comments: number }
  | { type: 'handoff.waiting'; conversation_id: string; seq: number; expected_wait_seconds: number | null }
  | { type: 'handoff.away'; conversation_id: string; seq: number; until: string | null; text: string }
  | { type: 'agent.joined'; conversation_id: string; seq: number; name: string }
  | { type: 'agent.message'; conversation_id: string; seq: number; message_id: string; name: string; text: string; created_at: string }
  | { type: 'agent.left'; conversation_id: string; seq: number; name: string }
  | { type: 'agent.typing'; conversation_id: string; seq: number; name: string }
  | { type: 'visitor.message'; conversation_id: string; seq: number; message_id: string; client_message_id: string | null; text: string; created_at: string }
  | { type: 'conversation.resolved'; conversation_id: string; seq: number }
  | { type: 'status'; conversation_id: string; seq: number; status: string; handled_by: HandledBy };

/** An event before it has its seq. */
export type EventDraft = ConversationEvent extends infer E ? (E extends ConversationEvent ? Omit<E, 'seq'> : never) : never;
