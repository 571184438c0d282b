import { getLogger } from '../core/logger';
import { startBackgroundLoop, type BackgroundLoop } from '../core/loop';
import { processSlot } from '../core/process';
import { wakeSnoozedConversations } from './handoff';

/**
 * The background loop that wakes snoozed conversations at their time (docs/decisions/handoff.md
 * `wake`). Every instance runs one: each conversation is woken under its row lock after a fresh
 * read, so two instances never wake one twice. Per process by nature (its timer).
 */
export const SNOOZE_SWEEP_MS = 15_000;
const BATCH = 100;

const slot = processSlot<BackgroundLoop>('svc.snoozeSweeper');

export function startSnoozeSweeper(): void {
  if (slot.get()) return;
  slot.set(
    startBackgroundLoop({
      pollMs: SNOOZE_SWEEP_MS,
      step: async () => (await wakeSnoozedConversations({ limit: BATCH })) >= BATCH,
      onDown: (e) => getLogger().error({ err: e }, 'snooze sweeper: cannot wake snoozed conversations; retrying'),
    }),
  );
}

export async function stopSnoozeSweeper(): Promise<void> {
  const loop = slot.get();
  if (!loop) return;
  await loop.stop();
  slot.clear();
}
