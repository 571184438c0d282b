/**
 * The members' live inbox over socket.io namespace `/inbox` (docs/decisions/inbox.md). The
 * handshake carries the dashboard's session cookie; requests go client → server with an
 * acknowledgement; the server pushes changes of the member's account to its room.
 */
import { z } from 'zod';
import { uuidString } from '../core/validation';

export const INBOX_NAMESPACE = '/inbox';

/** The views of /inbox (docs/contracts.md §14), in the order the page shows them. */
export const INBOX_VIEWS = ['waiting', 'mine', 'unassigned', 'open', 'resolved'] as const;
export const InboxViewSchema = z.enum(INBOX_VIEWS, { error: 'must be one of waiting, mine, unassigned, open, resolved' });
export type InboxView = z.infer<typeof InboxViewSchema>;
export const VIEW_LABELS: Record<InboxView, string> = { waiting: 'Waiting', mine: 'Mine', unassigned: 'Unassigned', open: 'All open', resolved: 'Resolved' };

/** A member typing shows for this long after the last keystroke (docs/contracts.md §14). */
export const TYPING_SHOWN_MS = 10_000;

const Uuid = uuidString();

export const InboxRequests = {
  /** One view's first page and every view's count, for this member. */
  'inbox:list': z.object({ view: InboxViewSchema }),
  /** The member is typing a reply: the visitor sees it until a message or TYPING_SHOWN_MS of quiet. */
  typing: z.object({ conversation_id: Uuid }),
  // A member's actions on a conversation: each one call of the handoff core, which validates the rest.
  'conversation:take_over': z.object({ conversation_id: Uuid }),
  'conversation:assign': z.object({ conversation_id: Uuid, user_id: z.int('must be a member id').positive('must be a member id') }),
  'conversation:reply': z.object({ conversation_id: Uuid, text: z.string('must be text') }),
  'conversation:note': z.object({ conversation_id: Uuid, text: z.string('must be text') }),
  'conversation:hand_back': z.object({ conversation_id: Uuid }),
  'conversation:resolve': z.object({ conversation_id: Uuid }),
  'conversation:snooze': z.object({ conversation_id: Uuid, until: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 time' }) }),
};
export type InboxRequestName = keyof typeof InboxRequests;

/** Codes of connect_error's `data.code` and of `session:revoked` / `server:draining`. */
export type InboxRefusalCode = 'unauthenticated' | 'session_ended' | 'draining' | 'unavailable';
export type InboxRefusal = { code: InboxRefusalCode; message: string };

/**
 * Server → member events, all to the account's room on every instance:
 * `inbox:changed` {conversation_id} (a status, assignee or list row changed: the page re-reads its
 * view and counts), `inbox:message` {conversation_id, message} (a reply, visitor message, system
 * line or internal note), `inbox:typing` {conversation_id, user_id, name, until}.
 */
export type InboxServerEvent = 'inbox:changed' | 'inbox:message' | 'inbox:typing';
