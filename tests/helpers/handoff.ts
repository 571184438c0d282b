/** Conversations in handoff states for inbox tests, through the handoff core's service (the same one the widget and members use). */
import { addNote, replyAsMember, requestHandoff, takeOver, type Actor } from '../../lib/conversations/handoff';
import { conversationLine, importLines, newChannelIds, responseLine } from './builders';

export type { Actor };

/** A conversation of the account whose visitor asked for a person: Waiting, assigned to nobody. */
export async function waitingConversation(accountId: number, title = 'Where is my order?') {
  const [channelId] = await newChannelIds(1);
  const line = conversationLine({ channel_id: channelId!, title });
  await importLines(accountId, [line, responseLine(line, { question: title, answer: 'I could not find that in the documents.' })]);
  const id = line.conversation_id;
  await requestHandoff(accountId, id);
  return {
    id,
    takeOver: (actor: Actor) => takeOver(actor, { conversationId: id }),
    reply: (actor: Actor, text: string) => replyAsMember(actor, { conversationId: id, text }),
    note: (actor: Actor, text: string) => addNote(actor, { conversationId: id, text }),
  };
}
