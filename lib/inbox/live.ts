import type { Namespace } from 'socket.io';
import type { InboxEvent } from '../conversations/events';
import { accountInboxCounts } from '../conversations/inbox-views';
import { sendLaterThisTurn } from '../redis/client';
import { TYPING_SHOWN_MS, type InboxServerEvents } from './protocol';

/** The room of an account's members on `/inbox`; the Redis adapter carries it to every instance. */
export function inboxRoom(accountId: number): string {
  return `account:${accountId}`;
}

/** Per account, the count reads in the order of the changes, so the last push carries the latest counts. */
const countReads = new Map<number, Promise<void>>();

/**
 * The core's inbox publisher (called after each commit): its event as the members' socket events.
 * A status or assignee change carries every member's counts, read once here (not once per member).
 */
export function publishInboxChange(nsp: Namespace) {
  return (e: InboxEvent) => {
    const room = nsp.to(inboxRoom(e.account_id));
    // Members wait on every one of these: they leave at the end of this turn (the counts once read).
    sendLaterThisTurn();
    if (e.kind === 'typing') {
      room.emit('inbox:typing', {
        conversation_id: e.conversation_id,
        name: e.name ?? '',
        until: new Date(Date.now() + TYPING_SHOWN_MS).toISOString(),
      } satisfies InboxServerEvents['inbox:typing']);
      return;
    }
    if (e.kind === 'mail') {
      if (e.mail) room.emit('inbox:mail', { conversation_id: e.conversation_id, ...e.mail } satisfies InboxServerEvents['inbox:mail']);
      return;
    }
    if (e.message) room.emit('inbox:message', { conversation_id: e.conversation_id, message: e.message } satisfies InboxServerEvents['inbox:message']);
    const payload: InboxServerEvents['inbox:changed'] = { conversation_id: e.conversation_id, ...(e.conversation ? { conversation: e.conversation } : {}) };
    if (e.kind !== 'changed') {
      room.emit('inbox:changed', payload);
      return;
    }
    const read = (countReads.get(e.account_id) ?? Promise.resolve()).then(() =>
      accountInboxCounts(e.account_id)
        .then(
          (counts) => room.emit('inbox:changed', { ...payload, counts } satisfies InboxServerEvents['inbox:changed']),
          // The database is away: the change goes out without counts and pages re-read when they can.
          () => room.emit('inbox:changed', payload),
        )
        .then(sendLaterThisTurn),
    );
    countReads.set(e.account_id, read);
    void read.finally(() => countReads.get(e.account_id) === read && countReads.delete(e.account_id));
  };
}
