import { getDb } from '../../db/client';
import { storedEventsAfter } from '../conversations/events';
import { effectiveBotSettings } from '../bot/settings';
import { sourcesForVisitors } from '../answers/engine';
import { ownConversation, type JoinRoom } from '../visitor/service';
import type { Visitor } from '../visitor/contract';
import { readLive } from './live';
import type { ClientRequest, ServerEvent } from './protocol';
import { forWidget } from './legacy';

/** Events per `conversation:resume` page (hostile-input issue). */
export const RESUME_PAGE = 200;

/** Sends one event to the caller's connection only. */
export type SendEvent = (event: ServerEvent) => void;

/**
 * `conversation:resume`: subscribes, then sends the events after `last_seq` — stored ones from
 * the database, live deltas from the shared live buffer (so deltas of an answer streaming on
 * another instance are included) — one page at a time. `more` says another request is needed,
 * from `through_seq`.
 */
export async function resume(claims: Visitor, join: JoinRoom, send: SendEvent, req: ClientRequest<'conversation:resume'>, legacy = false) {
  const conv = await ownConversation(claims, req.conversation_id);
  join(req.conversation_id);
  const [stored, live] = await Promise.all([
    storedEventsAfter(await getDb(), req.conversation_id, req.last_seq, RESUME_PAGE + 1),
    readLive(req.conversation_id, req.last_seq, RESUME_PAGE + 1),
  ]);
  const bySeq = new Map<number, ServerEvent>();
  for (const e of live) bySeq.set(e.seq, e);
  for (const e of stored) bySeq.set(e.seq, e.payload as ServerEvent);
  const all = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  const page = all.slice(0, RESUME_PAGE);
  const { showSources } = await effectiveBotSettings(claims.accountId);
  for (const e of page) send(e.type === 'answer.done' ? { ...e, sources: sourcesForVisitors(e.sources, showSources) } : forWidget(e, legacy));
  const through = page.at(-1)?.seq ?? req.last_seq;
  return { conversation_id: req.conversation_id, last_seq: Math.max(conv.last_seq, through), through_seq: through, more: all.length > RESUME_PAGE };
}
