import { getDb } from '../../db/client';
import { refreshDirtyInsights } from '../../db/queries/insights';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';

/**
 * Rolls up the insights of past days marked dirty (docs/decisions/insights.md) before anyone reads
 * them, so a read after a busy day or an import seldom waits for a refresh. Every instance runs one;
 * an account another refresh holds is skipped. Per process by nature (its timer).
 */
export const INSIGHTS_REFRESH_MS = 60_000;
const ACCOUNTS = 20;

const refresher = processLoop('svc.insightsRefresher');

export function startInsightsRefresher(): void {
  refresher.start({
    pollMs: INSIGHTS_REFRESH_MS,
    step: async () => (await refreshDirtyInsights(await getDb(), ACCOUNTS)) >= ACCOUNTS,
    onDown: (e) => getLogger().error({ err: e }, 'insights refresher: cannot refresh the rollup; retrying'),
  });
}

export async function stopInsightsRefresher(): Promise<void> {
  await refresher.stop();
}
