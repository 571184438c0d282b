import { getDb } from '../../db/client';
import { claimDueAnswerTestRun } from '../../db/queries/answer-tests';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { automaticRunTiming, runClaimed } from './service';
import { hasFreeRunSlot, withRunSlot } from './slots';

/**
 * The automatic runs (docs/contracts.md §20): every instance runs this loop; each step claims one
 * account whose knowledge base changed (FOR UPDATE SKIP LOCKED and a lease: no double work across
 * instances) once its edits paused, and runs its tests. Only when this process has a free run slot.
 */
const loop = processLoop('svc.answerTests');

export function startAnswerTestsWorker(): void {
  loop.start({
    pollMs: getEnv().ANSWER_TESTS_POLL_SECONDS * 1000,
    step: async (handle) => {
      if (!hasFreeRunSlot()) return false;
      return withRunSlot(async () => {
        const due = await claimDueAnswerTestRun(await getDb(), automaticRunTiming());
        if (!due) return false;
        try {
          const run = await runClaimed(due.account_id, due.kb_version, 'automatic', () => handle.stopping);
          if (run) getLogger().info({ accountId: due.account_id, passed: run.passed, failed: run.failed }, 'answer tests: automatic run');
        } catch (e) {
          getLogger().error({ err: e, accountId: due.account_id }, 'answer tests: automatic run failed; retried after its lease');
        }
        return true;
      });
    },
    onDown: (e) => getLogger().error({ err: e }, 'answer tests: cannot look for due runs; retrying'),
  });
}

export async function stopAnswerTestsWorker(): Promise<void> {
  await loop.stop();
}
