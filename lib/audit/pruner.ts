import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { pruneAuditBatch } from './service';

/**
 * Deletes audit entries older than AUDIT_RETENTION_DAYS (docs/contracts.md §18), in batches, every
 * hour on every instance: a batch skips rows another instance holds, so two never wait on each other.
 */
export const AUDIT_PRUNE_MS = 3_600_000;
const pruner = processLoop('svc.auditPruner');

export function startAuditPruner(): void {
  pruner.start({
    pollMs: AUDIT_PRUNE_MS,
    step: async () => (await pruneAuditBatch(getEnv().AUDIT_RETENTION_DAYS)).more,
    onDown: (e) => getLogger().error({ err: e }, 'audit pruner: cannot delete old audit entries; retrying'),
  });
}

export async function stopAuditPruner(): Promise<void> {
  await pruner.stop();
}
