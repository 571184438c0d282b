import type { Db } from '../../db/client';
import { insertConversationEvent, listEventsAfter, nextSeq, type StoredEvent } from '../../db/queries/chat';
import type { Author, ConversationEvent, EventDraft, HandledBy } from './shapes';
import { processSingleton } from '../core/process';

/**
 * The one writer of a conversation's events: every producer (the visitor's requests, the answer
 * runner; members and the system next) gives its event here, which takes the conversation's next
 * seq, stores the row and publishes it. Seqs come from ONE counter per conversation
 * (`conversations.last_seq`, db/queries/chat.ts), so they are unique and increasing on every instance.
 */
type Publisher = (event: ConversationEvent) => void;

/**
 * Where events go once written: the widget transport's live delivery registers itself when its
 * namespace is attached (lib/chat/socket.ts), so this layer never imports the transport above it.
 * Per process by nature (it holds this process's sockets); on globalThis because the server and
 * the route handlers Next bundles hold separate copies of this module.
 */
const slot = () => processSingleton('svc.conversationEvents', (): { publish?: Publisher } => ({}));

export function setEventPublisher(publish: Publisher | undefined): void {
  slot().publish = publish;
}

/**
 * Publishes an event already stored, with its seq. Use it after the transaction that stored it
 * committed (storeEvent), and for the events whose row is written by a combined statement with
 * the change they record (db/queries/chat.ts: a question with its answer's lease, an answer with
 * its response), which take the seq and store the row exactly as storeEvent does.
 */
export function publishEvent(event: ConversationEvent): void {
  slot().publish?.(event);
}

/** Stores an event with the conversation's next seq and returns it; publish it once its transaction commits. */
export async function storeEvent<D extends EventDraft>(tx: Db, draft: D): Promise<D & { seq: number }> {
  const seq = await insertConversationEvent(tx, draft.conversation_id, draft.type, draft);
  return { ...draft, seq };
}

/** A live event (an answer's delta, a member typing): it takes the next seq but no row, and is published at once. */
export async function appendLiveEvent<D extends Extract<EventDraft, { type: 'answer.delta' | 'agent.typing' }>>(db: Db, draft: D): Promise<void> {
  publishEvent({ ...draft, seq: await nextSeq(db, draft.conversation_id) });
}

/** Stored events after `afterSeq`, oldest first, at most `limit` (resume). */
export async function storedEventsAfter(db: Db, conversationId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  return listEventsAfter(db, conversationId, afterSeq, limit);
}

/**
 * What members see live (the inbox namespace, lib/inbox/, registers with setInboxPublisher): every
 * committed change of a conversation's handoff state or messages, INCLUDING notes (which never
 * become conversation events). `kind`: `changed` (status, handler or assignee), `message` (a
 * visitor's, member's or system message), `note`, `typing`, `rated`, `mail` (a reply's mail was sent
 * or failed), `deleted` (retention or an erasure removed it: open pages re-read and find it gone).
 */
export type InboxEvent = {
  account_id: number;
  conversation_id: string;
  kind: 'changed' | 'message' | 'note' | 'typing' | 'rated' | 'mail' | 'deleted';
  /** For `changed`: the conversation after the change. */
  conversation?: {
    title: string;
    status: string;
    previous_status: string;
    handled_by: HandledBy;
    assignee_id: number | null;
    assignee: string | null;
    assignee_name: string | null;
  };
  /** For `message` and `note`; a member's carries its `client_message_id`, so the sending page matches what it holds as "Sending…". */
  message?: {
    id: string;
    author: Author;
    author_name: string | null;
    text: string;
    created_at: string;
    client_message_id?: string;
    /** A member's reply in an email conversation: its mail's state. */
    mail?: 'queued' | 'sent' | 'failed';
    /** A visitor's files on the message (a widget upload, a mail's attachment). */
    attachments?: Array<{ id: string; filename: string; content_type: string; size: number }>;
  };
  /** For `mail`: the state of the mail carrying a member's reply (`error`: why it failed). */
  mail?: { message_id: string; state: 'queued' | 'sent' | 'failed'; error: string | null };
  /** For `typing`: the member's name; for `rated`: unset. */
  name?: string;
  rating?: number;
};
type InboxPublisher = (event: InboxEvent) => void;

const inboxSlot = () => processSingleton('svc.inboxEvents', (): { publish?: InboxPublisher } => ({}));

/** The inbox namespace registers here when attached (per process, like setEventPublisher). */
export function setInboxPublisher(publish: InboxPublisher | undefined): void {
  inboxSlot().publish = publish;
}

/** Publishes to members after the change committed. */
export function publishInboxEvent(event: InboxEvent): void {
  inboxSlot().publish?.(event);
}
