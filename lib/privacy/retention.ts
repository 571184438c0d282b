import { getDb } from '../../db/client';
import { claimExpiredConversations, getRetentionDays, listRetentionAccounts, setRetentionDays } from '../../db/queries/privacy';
import { validate } from '../accounts/service';
import { requireRole, type Role } from '../auth/roles';
import { onInvalidation, publishInvalidation } from '../cache/invalidation';
import type { AuditBy } from '../audit/contract';
import { recordAudit } from '../audit/service';
import { AppError } from '../core/errors';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { RetentionInput, type Retention } from './contract';
import { DELETE_BATCH, deleteConversationBatch, type InBatch } from './deletion';

type Member = { accountId: number; role: Role; by: AuditBy };

/** The invalidation topic a changed retention publishes: every instance's job looks at once. */
const RETENTION_TOPIC = 'retention';

export async function getRetention(accountId: number): Promise<Retention> {
  const days = await getRetentionDays(await getDb(), accountId);
  if (days === undefined) throw new AppError('not_found', `No account with id ${accountId}.`);
  return { days };
}

/**
 * Sets the account's retention (`{"days": N|null}`; the CLI's door, and the page's through
 * saveRetention). One transaction, the change's one place; then every instance's job wakes.
 */
export async function setRetention(by: AuditBy, accountId: number, input: unknown): Promise<Retention> {
  const v = validate(RetentionInput, input);
  const db = await getDb();
  const found = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as typeof db;
    const before = await getRetentionDays(tx, accountId);
    if (before === undefined || !(await setRetentionDays(tx, accountId, v.days))) return false;
    if (before !== v.days) await recordAudit(tx, accountId, by, 'retention.changed', `days ${before ?? 'off'} → ${v.days ?? 'off'}`);
    return true;
  });
  if (!found) throw new AppError('not_found', `No account with id ${accountId}.`);
  await publishInvalidation(RETENTION_TOPIC, String(accountId));
  return { days: v.days };
}

/** What /privacy shows of retention. */
export async function retentionPage(member: Omit<Member, 'by'>): Promise<Retention> {
  requireRole(member, 'privacy.manage');
  return getRetention(member.accountId);
}

/** "Save retention" on /privacy. */
export async function saveRetention(member: Member, input: unknown): Promise<Retention> {
  requireRole(member, 'privacy.manage');
  return setRetention(member.by, member.accountId, input);
}

/**
 * One round of the retention job: each account with retention on gets one batch (fair: a large
 * account never starves the others), its expired conversations claimed with SKIP LOCKED (two
 * instances never take the same ones). `more`: some account filled its batch, so another round is
 * due at once.
 */
export async function runRetentionRound(batch = DELETE_BATCH, inBatch?: InBatch): Promise<{ deleted: number; more: boolean }> {
  const db = await getDb();
  let deleted = 0;
  let more = false;
  for (const a of await listRetentionAccounts(db)) {
    const done = await deleteConversationBatch(db, a.id, (tx) => claimExpiredConversations(tx, a.id, a.retention_days, batch), 'retention', inBatch);
    deleted += done.conversations;
    if (done.conversations >= batch) more = true;
  }
  return { deleted, more };
}

const job = processLoop('svc.retention');
let unsubscribe: (() => void) | undefined;

/** Every instance runs the job: every RETENTION_INTERVAL_SECONDS, and at once when any account's retention changes. Per process by nature (its timer). */
export function startRetentionJob(): void {
  unsubscribe ??= onInvalidation(RETENTION_TOPIC, () => job.wake());
  job.start({
    pollMs: getEnv().RETENTION_INTERVAL_SECONDS * 1000,
    step: async () => {
      const { deleted, more } = await runRetentionRound();
      if (deleted > 0) getLogger().info({ conversations: deleted }, 'retention: deleted expired conversations');
      return more;
    },
    onDown: (e) => getLogger().error({ err: e }, 'retention: cannot delete expired conversations; retrying'),
  });
}

export async function stopRetentionJob(): Promise<void> {
  unsubscribe?.();
  unsubscribe = undefined;
  await job.stop();
}
