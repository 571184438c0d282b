import type { HistoryMessage, ServerEvent } from './protocol';

/**
 * Widgets 2.0.x (immutable bundles) know only questions and answers. So that a
 * conversation a person takes over loses nothing for them (docs/contracts.md §14), the handoff
 * events they would ignore are sent to them as what they render: a member's message, a join,
 * a leave and the other notices as an answer's delta (shown as the bot's bubble, prefixed by
 * the member's name, never final so it carries no Like/Dislike), the visitor's own stored
 * message as a `question`. The translated event keeps its seq.
 */
export function isLegacyWidget(version: unknown): boolean {
  return typeof version === 'string' && /^2\.0\.\d{1,3}$/.test(version);
}

/** The room of a conversation's legacy widgets (they are in its main room too). */
export function legacyRoomOf(conversationId: string): string {
  return `conv:${conversationId}:2.0`;
}

const plain = (name: string) => name.replace(/[*_`[\]]/g, '');

/** The event a legacy widget renders for a handoff event; null when it needs none (it ignores the original). */
export function legacyEvent(e: ServerEvent): ServerEvent | null {
  const note = (text: string, id = `handoff-${e.seq}`): Extract<ServerEvent, { type: 'answer.delta' }> => ({
    type: 'answer.delta',
    conversation_id: e.conversation_id,
    seq: e.seq,
    client_message_id: id,
    response_id: id,
    text,
  });
  switch (e.type) {
    case 'agent.message':
      return note(`**${plain(e.name)}:** ${e.text}`, e.message_id);
    case 'agent.joined':
      return note(`_${plain(e.name)} joined_`);
    case 'agent.left':
      return note(`_${plain(e.name)} left — the assistant is back_`);
    case 'handoff.waiting':
      return note('_Connecting you to the team_');
    case 'handoff.away':
      return note(`_We're away right now._${e.text ? ` ${e.text}` : ''}`);
    case 'conversation.resolved':
      return note('_Conversation resolved_');
    case 'visitor.message':
      return {
        type: 'question',
        conversation_id: e.conversation_id,
        seq: e.seq,
        client_message_id: e.client_message_id ?? `visitor-${e.message_id}`,
        response_id: e.message_id,
        text: e.text,
        attachments: [],
      };
    default:
      return null;
  }
}

/** A resumed event as the connection's widget renders it. */
export function forWidget(e: ServerEvent, legacy: boolean): ServerEvent {
  return legacy ? (legacyEvent(e) ?? e) : e;
}

/**
 * History for a legacy widget, which restores strict question/answer pairs: a visitor message
 * a person handled becomes a pair whose answer is "Sent to the team"; members' and system
 * messages are appended to the answer before them, each under its author's name.
 */
export function legacyHistory(messages: HistoryMessage[]): HistoryMessage[] {
  const out: HistoryMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const next = messages[i + 1];
    if (m.author === 'visitor') {
      if (next?.author === 'ai' && next.response_id === m.response_id) {
        out.push(m, next);
        i++;
      } else {
        out.push(m, { ...m, message_id: `${m.message_id}-sent`, role: 'assistant', author: 'system', content: '_Sent to the team_', sources: [] });
      }
      continue;
    }
    const line = m.author === 'agent' ? `**${plain(m.author_name ?? 'Team')}:** ${m.content}` : `_${m.content}_`;
    const last = out.at(-1);
    if (last) {
      out[out.length - 1] = { ...last, content: last.content ? `${last.content}\n\n${line}` : line };
    }
  }
  return out;
}
