import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { wakeSnoozedConversations } from './handoff';

/**
 * The background loop that wakes snoozed conversations at their time (docs/decisions/handoff.md
 * `wake`). Every instance runs one: each conversation is woken under its row lock after a fresh
 * read, so two instances never wake one twice. Per process by nature (its timer).
 */
export const SNOOZE_SWEEP_MS = 15_000;
const BATCH = 100;

const sweeper = processLoop('svc.snoozeSweeper');

export function startSnoozeSweeper(): void {
  sweeper.start({
    pollMs: SNOOZE_SWEEP_MS,
    step: async () => (await wakeSnoozedConversations({ limit: BATCH })) >= BATCH,
    onDown: (e) => getLogger().error({ err: e }, 'snooze sweeper: cannot wake snoozed conversations; retrying'),
  });
}

export async function stopSnoozeSweeper(): Promise<void> {
  await sweeper.stop();
}
