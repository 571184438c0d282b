/** Conversations in handoff states for inbox tests, through the handoff core's service (the same one the widget and members use). */
import { addNote, replyAsMember, requestHandoff, takeOver } from '../../lib/conversations/handoff';
import type { Member } from '../../lib/conversations/handoff-contract';
import { conversationLine, importLines, newChannelIds, responseLine } from './builders';

export type { Member };

/** A conversation of the account whose visitor asked for a person: Waiting, assigned to nobody. */
export async function waitingConversation(accountId: number, title = 'Where is my order?') {
  const [channelId] = await newChannelIds(1);
  const line = conversationLine({ channel_id: channelId!, title });
  await importLines(accountId, [line, responseLine(line, { question: title, answer: 'I could not find that in the documents.' })]);
  const id = line.conversation_id;
  await requestHandoff({ accountId, conversationId: id });
  return {
    id,
    takeOver: (member: Member) => takeOver(member, { conversation_id: id }),
    reply: (member: Member, text: string) => replyAsMember(member, { conversation_id: id, text }),
    note: (member: Member, text: string) => addNote(member, { conversation_id: id, text }),
  };
}
