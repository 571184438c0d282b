import type { Namespace } from 'socket.io';
import type { InboxChange } from '../conversations/handoff';

/** The room of an account's members on `/inbox`; the Redis adapter carries it to every instance. */
export function inboxRoom(accountId: number): string {
  return `account:${accountId}`;
}

/**
 * The core's inbox publisher (called after each commit): a message or note reaches open
 * conversation pages, and every change tells the lists to re-read their view and counts.
 */
export function publishInboxChange(nsp: Namespace) {
  return (change: InboxChange) => {
    const room = nsp.to(inboxRoom(change.accountId));
    if (change.message) room.emit('inbox:message', { conversation_id: change.conversationId, message: change.message });
    room.emit('inbox:changed', { conversation_id: change.conversationId });
  };
}

/** A member typing, to the other members of the account (the visitor gets the core's `agent.typing`). */
export function publishMemberTyping(nsp: Namespace, accountId: number, typing: { conversation_id: string; user_id: number; name: string; until: string }) {
  nsp.to(inboxRoom(accountId)).emit('inbox:typing', typing);
}
