import { MAX_AWAY_TEXT_CHARS, WEEKDAYS } from '@/lib/conversations/handoff-contract';
import { getHandoffFormValues } from '@/lib/dashboard/handoff-settings';
import { HandoffForm } from './HandoffForm';

/** /bot's "Handoff" section (docs/contracts.md §14 "office hours"). */
export async function HandoffSection({ accountId }: { accountId: number }) {
  return <HandoffForm initial={await getHandoffFormValues(accountId)} weekdays={[...WEEKDAYS]} maxAwayText={MAX_AWAY_TEXT_CHARS} />;
}
