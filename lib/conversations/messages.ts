import { z } from 'zod';
import { attachmentUrl } from '../api/links';
import { Timestamp } from '../api/timestamps';
import type { Message } from './contract';
import type { StoredMessageRow } from '../../db/queries/handoff';
import { Author, Source } from './shapes';

export const MessageAttachment = z.object({ id: z.guid(), filename: z.string(), content_type: z.string(), size: z.int().min(0) });
export type MessageAttachment = z.infer<typeof MessageAttachment>;

/**
 * A message of a conversation as every reader receives it (Customer API, export, widget history,
 * dashboard transcript); each reader shapes it for its own wire. `likes`, `dislikes`, `comments`
 * and `mine` (the reading visitor's own reaction) are the response's, on both of its messages.
 */
export const ConversationMessage = z.object({
  message_id: z.guid(),
  author: Author,
  /** The member's name for `agent` and `note` (the part of the email before @ when unnamed), else null. */
  author_name: z.string().nullable(),
  /** The response a question or answer is half of; null for a stored message (docs/decisions/handoff.md). */
  response_id: z.guid().nullable(),
  content: z.string(),
  created_at: Timestamp,
  error: z.string().nullable(),
  sources: z.array(Source),
  attachments: z.array(MessageAttachment),
  likes: z.int().min(0),
  dislikes: z.int().min(0),
  comments: z.int().min(0),
  mine: z.enum(['like', 'dislike']).nullable(),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

/** A stored response as the queries read it; the columns a reader does not need may be left out. */
export type ResponseTurn = {
  id: string;
  question: string;
  answer: string;
  question_message_id: string;
  answer_message_id: string;
  created_at: string;
  /** Microsecond UTC text (db/queries/shared.ts preciseUtcText): orders it among stored messages. */
  sort_at?: string;
  error?: string | null;
  sources?: unknown;
  likes?: number;
  dislikes?: number;
  comments?: number;
  my_feedback?: number | null;
};
/** A stored message that is not half of a response (conversation_messages); `sort_at` as ResponseTurn's, `seq` orders one instant's. */
export type StoredMessage = Omit<StoredMessageRow, 'client_message_id'>;
/** An attachment row; `message_id` null while it is not attached to a message yet. */
export type AttachmentOfMessage = MessageAttachment & { message_id: string | null };

/**
 * The one builder of a conversation's messages, oldest first: each response (in the order given,
 * oldest first) gives its question (author `visitor`) then its answer (author `ai`), each with
 * its attachments in the order given; `stored` messages (members', system, notes, visitors' while
 * a person handles it) are merged in by `sort_at`, then a response before a stored message, then
 * seq (stored) or id (responses). A reader a visitor sees leaves notes out of `stored`.
 */
export function messagesOf(turns: ResponseTurn[], attachments: AttachmentOfMessage[], stored: StoredMessage[] = []): ConversationMessage[] {
  const byMessage = new Map<string, MessageAttachment[]>();
  for (const a of attachments) {
    if (!a.message_id) continue;
    const list = byMessage.get(a.message_id) ?? [];
    list.push({ id: a.id, filename: a.filename, content_type: a.content_type, size: a.size });
    byMessage.set(a.message_id, list);
  }
  const fromTurns = (r: ResponseTurn): ConversationMessage[] => {
    const common = {
      author_name: null,
      response_id: r.id,
      created_at: r.created_at,
      likes: r.likes ?? 0,
      dislikes: r.dislikes ?? 0,
      comments: r.comments ?? 0,
      mine: r.my_feedback === 1 ? ('like' as const) : r.my_feedback === -1 ? ('dislike' as const) : null,
    };
    return [
      {
        ...common,
        message_id: r.question_message_id,
        author: 'visitor' as const,
        content: r.question,
        error: null,
        sources: [],
        attachments: byMessage.get(r.question_message_id) ?? [],
      },
      {
        ...common,
        message_id: r.answer_message_id,
        author: 'ai' as const,
        content: r.answer,
        error: r.error ?? null,
        sources: (r.sources as Source[] | null | undefined) ?? [],
        attachments: byMessage.get(r.answer_message_id) ?? [],
      },
    ];
  };
  if (stored.length === 0) return turns.flatMap(fromTurns);
  type Unit = { key: string; rank: number; seq: number; id: string; messages: ConversationMessage[] };
  const units: Unit[] = [
    ...turns.map((r) => ({ key: r.sort_at ?? r.created_at, rank: 0, seq: 0, id: r.id, messages: fromTurns(r) })),
    ...stored.map((m) => ({ key: m.sort_at, rank: 1, seq: m.seq, id: m.id, messages: [fromStored(m, byMessage)] })),
  ];
  units.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.rank - b.rank || a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  return units.flatMap((u) => u.messages);
}

function fromStored(m: StoredMessage, byMessage: Map<string, MessageAttachment[]>): ConversationMessage {
  return {
    message_id: m.id,
    author: m.author,
    author_name: m.author_name,
    response_id: null,
    content: m.text,
    created_at: m.created_at,
    error: null,
    sources: [],
    attachments: byMessage.get(m.id) ?? [],
    likes: 0,
    dislikes: 0,
    comments: 0,
    mine: null,
  };
}

/** The public role of an author: the API and the widget speak of `user` and `assistant` only. */
export function roleOf(author: Author): 'user' | 'assistant' {
  return author === 'visitor' ? 'user' : 'assistant';
}

/**
 * A message as the Customer API gives it (GET /conversation/{id}, the export's include=messages).
 * The export's COPY path writes the same JSON in SQL (db/queries/export.ts messagesJson); the
 * export test holds the two byte-identical.
 */
export function toApiMessage(m: ConversationMessage): Message {
  return {
    message_id: m.message_id,
    role: roleOf(m.author),
    author: m.author,
    author_name: m.author_name,
    content: m.content,
    created_at: m.created_at,
    response_id: m.response_id,
    attachments: m.attachments.map((a) => ({ upload_id: a.id, filename: a.filename, content_type: a.content_type, size: a.size, url: attachmentUrl(a.id) })),
  };
}
