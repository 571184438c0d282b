/**
 * The members' live inbox over socket.io namespace `/inbox` (docs/decisions/inbox.md). The
 * handshake carries the dashboard's session cookie; requests go client → server with an
 * acknowledgement; the server pushes the changes of the member's account to its room. Request
 * payloads are parsed by their schemas (./schemas.ts, the core's inputs) before the core is called;
 * this module holds only types and constants, so the page's client imports it.
 */
import type { z } from 'zod';
import type { AccountInboxCounts, InboxView } from '../../db/queries/inbox';
import type { InboxEvent } from '../conversations/events';
import type { InboxRequests } from './schemas';

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
 * messages before the cursor a page gave ("Load earlier") and `earlier`, the next cursor or null;
 * `conversation:suggest` {conversation_id} → the suggested reply to the visitor's last message (never sent). Acks: `{ok: true, …}` or `{ok: false, error: {code, message}}`.
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
  'conversation:suggest',
] as const;
export type InboxRequestName = (typeof INBOX_REQUESTS)[number];
/** A request's payload as the server accepts it. */
export type InboxRequest<N extends InboxRequestName> = z.infer<(typeof InboxRequests)[N]>;

/** Codes of connect_error's `data.code` and of `session:revoked` / `server:draining`. */
export type InboxRefusalCode = 'unauthenticated' | 'session_ended' | 'draining' | 'unavailable';
export type InboxRefusal = { code: InboxRefusalCode; message: string };

/** A conversation after a change, as `inbox:changed` carries it. */
export type InboxConversationChange = NonNullable<InboxEvent['conversation']>;
/** A message as `inbox:message` carries it (a member's with its `client_message_id`). */
export type InboxMessage = NonNullable<InboxEvent['message']>;

/**
 * Server → member events, to the account's room on every instance, by name: `inbox:changed`
 * (status, handler, assignee, a new message or a rating; `conversation` after a change: lists re-read
 * their view; a status or assignee change carries `counts`, the account's four and `mine` per
 * assignee id, to apply at once), `inbox:message` (a visitor's or member's message, a system line,
 * an internal note; a member's reply in an email conversation carries `mail`, its mail's state), `inbox:typing` (shown
 * until `until`), `inbox:mail` (that mail was sent or failed).
 */
export type InboxServerEvents = {
  'inbox:changed': { conversation_id: string; conversation?: InboxConversationChange; counts?: AccountInboxCounts };
  'inbox:message': { conversation_id: string; message: InboxMessage };
  'inbox:typing': { conversation_id: string; name: string; until: string };
  'inbox:mail': InboxMailState;
};
/** The mail carrying a member's reply in an email conversation: queued, sent or failed (`error`: why). */
export type InboxMailState = { conversation_id: string } & NonNullable<InboxEvent['mail']>;
export type InboxServerEvent = keyof InboxServerEvents;
