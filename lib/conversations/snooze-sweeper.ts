import { onDrain } from '../core/drain';
import { getLogger } from '../core/logger';
import { wakeablePause } from '../core/pause';
import { processSlot } from '../core/process';
import { wakeSnoozedConversations } from './handoff';

/**
 * The background loop that wakes snoozed conversations at their time (docs/decisions/handoff.md
 * `wake`). Every instance runs one: each conversation is woken under its row lock after a fresh
 * read, so two instances never wake one twice. Per process by nature (its timer).
 */
export const SNOOZE_SWEEP_MS = 15_000;
const BATCH = 100;

type Sweeper = { stopping: boolean; wake: () => void; loop: Promise<void>; unsubscribeDrain: () => void };
const slot = processSlot<Sweeper>('svc.snoozeSweeper');

export function startSnoozeSweeper(): void {
  if (slot.get()) return;
  const s: Sweeper = { stopping: false, wake: () => {}, loop: Promise.resolve(), unsubscribeDrain: () => {} };
  const pause = wakeablePause(() => s.stopping);
  s.wake = pause.wake;
  s.loop = (async () => {
    let failures = 0;
    while (!s.stopping) {
      try {
        const woken = await wakeSnoozedConversations({ limit: BATCH });
        failures = 0;
        if (woken < BATCH) await pause.idle(SNOOZE_SWEEP_MS);
      } catch (e) {
        if (failures === 0) getLogger().error({ err: e }, 'snooze sweeper: cannot wake snoozed conversations; retrying');
        failures++;
        await pause.idle(Math.min(SNOOZE_SWEEP_MS * 2 ** Math.min(failures, 3), 120_000));
      }
    }
  })();
  s.unsubscribeDrain = onDrain(() => {
    s.stopping = true;
    s.wake();
  });
  slot.set(s);
}

export async function stopSnoozeSweeper(): Promise<void> {
  const s = slot.get();
  if (!s) return;
  s.stopping = true;
  s.wake();
  await s.loop;
  s.unsubscribeDrain();
  slot.clear();
}
