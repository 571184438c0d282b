import { z } from 'zod';
import { getDb } from '../../db/client';
import { withAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';
import { getEmailSettingsRow, newestTestMail, setEmailSettingsRow } from '../../db/queries/inbound-mail';
import { validate } from '../accounts/service';
import { requireRole, type Role } from '../auth/roles';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { inboundAddress, regenerateInboundAddress } from './address';

/** The settings of /email (docs/contracts.md §17): "AI answers email" and "Acknowledge new emails". */
export const EmailSettingsInput = z.object({ ai_answers: z.boolean(), acknowledge: z.boolean() });
export type EmailSettings = z.infer<typeof EmailSettingsInput>;

type Member = { accountId: number; role: Role };

/** What /email shows: the address, whether this server listens for mail, the settings, the newest test mail received. */
export async function emailPage(member: Member) {
  requireRole(member, 'email.manage');
  const [{ address }, settings, lastTest] = await Promise.all([
    inboundAddress(member.accountId),
    getEmailSettings(member.accountId),
    getDb().then((db) => newestTestMail(db, member.accountId)),
  ]);
  return { address, listening: getEnv().INBOUND_SMTP_PORT !== undefined, settings, lastTest };
}

export async function getEmailSettings(accountId: number): Promise<EmailSettings> {
  const row = await getEmailSettingsRow(await getDb(), accountId);
  if (!row) throw new AppError('not_found', `No account with id ${accountId}.`);
  return { ai_answers: row.ai_answers, acknowledge: row.acknowledge };
}

export async function saveEmailSettings(by: AuditBy, member: Member, input: unknown): Promise<EmailSettings> {
  requireRole(member, 'email.manage');
  const v = validate(EmailSettingsInput, input);
  const target = `AI answers email ${v.ai_answers ? 'on' : 'off'}, acknowledge new emails ${v.acknowledge ? 'on' : 'off'}`;
  await withAudit(
    member.accountId,
    by,
    'email.settings_changed',
    (tx) => setEmailSettingsRow(tx, member.accountId, { aiAnswers: v.ai_answers, acknowledge: v.acknowledge }),
    () => target,
  );
  return v;
}

/** "Regenerate address": the old address refuses mail from now on. */
export async function regenerateAddress(by: AuditBy, member: Member): Promise<{ address: string }> {
  requireRole(member, 'email.manage');
  return regenerateInboundAddress(by, member.accountId);
}
