import type { AuditBy } from '../audit/contract';
import { AppError } from '../core/errors';
import { describeIssues, issueParams } from '../zod-issues';
import { getHandoffSettings, saveHandoffSettings } from '../conversations/availability';
import type { Member } from '../conversations/handoff-contract';
import { HandoffSettings, WEEKDAYS } from '../conversations/handoff-contract';

/**
 * The /bot "Handoff" form's door to the handoff settings: time inputs cannot show 24:00, so the
 * form's closing time 00:00 means midnight at the end of the day; errors are named by the form's labels.
 */
export type HandoffFormValues = {
  enabled: boolean;
  timeZone: string;
  days: Array<{ open: boolean; opens: string; closes: string }>;
  awayText: string;
};

const LABELS: Record<string, string> = {
  enabled: 'Visitors can ask for a person',
  time_zone: 'Time zone',
  away_text: 'Away text',
  ...Object.fromEntries(
    WEEKDAYS.flatMap((day, i) => [
      [`hours.${i}.open`, day],
      [`hours.${i}.opens`, `${day} opens`],
      [`hours.${i}.closes`, `${day} closes`],
    ]),
  ),
};

export async function getHandoffFormValues(accountId: number): Promise<HandoffFormValues> {
  const s = await getHandoffSettings(accountId);
  return {
    enabled: s.enabled,
    timeZone: s.time_zone,
    days: s.hours.map((d) => ({ open: d.open, opens: d.opens, closes: d.closes === '24:00' ? '00:00' : d.closes })),
    awayText: s.away_text,
  };
}

export async function saveHandoffForm(by: AuditBy, member: Member, v: HandoffFormValues): Promise<HandoffFormValues> {
  const input = {
    enabled: v.enabled,
    time_zone: v.timeZone,
    hours: v.days.map((d) => ({ open: d.open, opens: d.opens, closes: d.closes === '00:00' ? '24:00' : d.closes })),
    away_text: v.awayText,
  };
  const parsed = HandoffSettings.safeParse(input);
  if (!parsed.success) {
    const errors = issueParams(parsed.error, { path: 'full', names: LABELS });
    throw new AppError('invalid_request', describeIssues(errors), { errors });
  }
  await saveHandoffSettings(by, member, parsed.data);
  return getHandoffFormValues(member.accountId);
}
