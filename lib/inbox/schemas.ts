/**
 * The `/inbox` requests' schemas (zod, the single source of their types and checks): the socket
 * parses each payload with its schema before the one call of the core (lib/inbox/requests.ts). Server
 * only; the page's client imports the types through ./protocol.
 */
import { z } from 'zod';
import { AssignInput, ConversationRef, InboxListInput, MemberTextInput, SnoozeInput } from '../conversations/handoff-contract';
import type { InboxRequestName } from './protocol';

/** "Load earlier" on /inbox/<id>: `before` is the `earlier` cursor the conversation's last page gave. */
export const EarlierMessagesInput = ConversationRef.extend({ before: z.string({ error: 'is required' }).min(1, 'is required').max(200) });

export const InboxRequests = {
  'inbox:list': InboxListInput,
  typing: ConversationRef,
  'conversation:take_over': ConversationRef,
  'conversation:assign': AssignInput,
  'conversation:reply': MemberTextInput,
  'conversation:note': MemberTextInput,
  'conversation:hand_back': ConversationRef,
  'conversation:resolve': ConversationRef,
  'conversation:snooze': SnoozeInput,
  'conversation:messages': EarlierMessagesInput,
  'conversation:suggest': ConversationRef,
} as const satisfies Record<InboxRequestName, z.ZodObject>;
