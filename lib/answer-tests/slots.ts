import { processSingleton } from '../core/process';
import { getEnv } from '../env';

/**
 * The test runs this process runs at once (ANSWER_TESTS_CONCURRENCY). Per process by nature: it
 * bounds this instance's CPU spent on tests; one run per account across instances is the lease's job.
 */
type Slots = { active: number; waiting: Array<() => void> };
const slots = () => processSingleton<Slots>('svc.answerTests.slots', () => ({ active: 0, waiting: [] }));

export function hasFreeRunSlot(): boolean {
  return slots().active < getEnv().ANSWER_TESTS_CONCURRENCY;
}

/** Runs `fn` when a slot is free (in order of arrival). */
export async function withRunSlot<T>(fn: () => Promise<T>): Promise<T> {
  const s = slots();
  if (s.active >= getEnv().ANSWER_TESTS_CONCURRENCY) await new Promise<void>((resolve) => s.waiting.push(resolve));
  else s.active++;
  try {
    return await fn();
  } finally {
    const next = s.waiting.shift();
    if (next) next();
    else s.active--;
  }
}
