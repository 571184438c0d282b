/**
 * The members' live inbox over socket.io namespace `/inbox` (docs/decisions/inbox.md). The
 * handshake carries the dashboard's session cookie; requests go client → server with an
 * acknowledgement; the server pushes the changes of the member's account to its room. Request
 * payloads are the handoff core's inputs (lib/conversations/handoff-contract.ts), validated there.
 */
import type { AccountInboxCounts, InboxView } from '../../db/queries/inbox';

export type { AccountInboxCounts, InboxView };

export const INBOX_NAMESPACE = '/inbox';

/** The views of /inbox (docs/contracts.md §14) in the page's order, with their labels. */
export const VIEW_LABELS: ReadonlyArray<readonly [InboxView, string]> = [
  ['waiting', 'Waiting'],
  ['mine', 'Mine'],
  ['unassigned', 'Unassigned'],
  ['all_open', 'All open'],
  ['resolved', 'Resolved'],
];

/** A member typing shows for this long after the last keystroke (docs/contracts.md §14). */
export const TYPING_SHOWN_MS = 10_000;

/**
 * Requests, each one call of the core: `inbox:list` {view, cursor?, limit?} → a page of the view
 * and every view's count for this member; `typing` {conversation_id}; the member actions
 * `conversation:take_over` / `hand_back` / `resolve` {conversation_id}, `conversation:assign`
 * {conversation_id, member_id}, `conversation:reply` / `note` {conversation_id, client_message_id, text} (a resend
 * with the same id answers with the first message),
 * `conversation:snooze` {conversation_id, until}; `conversation:messages` {conversation_id, before} → the
 * messages before the cursor a page gave ("Load earlier") and `earlier`, the next cursor or null. Acks: `{ok: true, …}` or `{ok: false, error: {code, message}}`.
 */
export const INBOX_REQUESTS = [
  'inbox:list',
  'typing',
  'conversation:take_over',
  'conversation:assign',
  'conversation:reply',
  'conversation:note',
  'conversation:hand_back',
  'conversation:resolve',
  'conversation:snooze',
  'conversation:messages',
] as const;
export type InboxRequestName = (typeof INBOX_REQUESTS)[number];

/** Codes of connect_error's `data.code` and of `session:revoked` / `server:draining`. */
export type InboxRefusalCode = 'unauthenticated' | 'session_ended' | 'draining' | 'unavailable';
export type InboxRefusal = { code: InboxRefusalCode; message: string };

/**
 * Server → member events, to the account's room on every instance: `inbox:changed`
 * {conversation_id, conversation?, counts?} (status, handler, assignee, a new message or a rating;
 * `conversation` after a change: title, status, previous_status, handled_by, assignee ids and names:
 * lists re-read their view; a status or assignee change carries `counts`, the account's four and
 * `mine` per assignee id, to apply at once), `inbox:message` {conversation_id, message} (a visitor's or
 * member's message, a system line, an internal note), `inbox:typing` {conversation_id, name, until}.
 */
export type InboxServerEvent = 'inbox:changed' | 'inbox:message' | 'inbox:typing';
