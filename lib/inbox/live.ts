import type { Namespace } from 'socket.io';
import type { InboxEvent } from '../conversations/events';
import { TYPING_SHOWN_MS } from './protocol';

/** The room of an account's members on `/inbox`; the Redis adapter carries it to every instance. */
export function inboxRoom(accountId: number): string {
  return `account:${accountId}`;
}

/** The core's inbox publisher (called after each commit): its event as the members' socket events. */
export function publishInboxChange(nsp: Namespace) {
  return (e: InboxEvent) => {
    const room = nsp.to(inboxRoom(e.account_id));
    if (e.kind === 'typing') {
      room.emit('inbox:typing', { conversation_id: e.conversation_id, name: e.name, until: new Date(Date.now() + TYPING_SHOWN_MS).toISOString() });
      return;
    }
    if (e.message) room.emit('inbox:message', { conversation_id: e.conversation_id, message: e.message });
    room.emit('inbox:changed', { conversation_id: e.conversation_id, ...(e.conversation ? { conversation: e.conversation } : {}) });
  };
}
