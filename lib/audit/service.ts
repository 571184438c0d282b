import { getDb, type Db } from '../../db/client';
import { getAccountById } from '../../db/queries/accounts';
import { listMembers } from '../../db/queries/team';
import { insertAuditEntry, listAuditActors, listAuditEntries, pruneAuditLog } from '../../db/queries/audit';
import { AppError } from '../core/errors';
import { describeIssues, issueParams } from '../zod-issues';
import { type AuditAction, AUDIT_ACTIONS, type AuditBy, CLI, SYSTEM, type AuditEntry, AuditListInput, MAX_TARGET_CHARS } from './contract';

/**
 * The audit log (docs/contracts.md §18). recordAudit takes the handle of the transaction that makes
 * the change: the entry commits with the change or not at all. Nothing here edits an entry.
 */
export async function recordAudit(tx: Db, accountId: number, by: AuditBy, action: AuditAction, target: string): Promise<void> {
  const cut = target.length > MAX_TARGET_CHARS ? `${target.slice(0, MAX_TARGET_CHARS - 1)}…` : target;
  await insertAuditEntry(tx, accountId, { actor: by.actor, action, target: cut, ip: by.ip });
}

/**
 * Runs a change and its entry in one transaction: `target` names what changed from the change's
 * result, or is null when nothing changed (no entry; the caller answers its 404).
 */
export async function withAudit<T>(
  accountId: number,
  by: AuditBy,
  action: AuditAction,
  change: (tx: Db) => Promise<T>,
  target: (result: T) => string | null,
): Promise<T> {
  const db = await getDb();
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const result = await change(tx);
    const what = target(result);
    if (what !== null) await recordAudit(tx, accountId, by, action, what);
    return result;
  });
}

export const AUDIT_PAGE_SIZE = 50;

function toEntry(r: { id: string; at: string; actor: string; action: string; target: string; ip: string | null }): AuditEntry {
  return { id: Number(r.id), at: r.at, actor: r.actor, action: r.action, target: r.target, ip: r.ip };
}

export type AuditFilters = { member: string; action: string; before?: number };

/** The /audit page's URL parameters (`member`, `action`, `before`); anything invalid is ignored. */
export function parseAuditFilters(params: Record<string, string | string[] | undefined>): AuditFilters {
  const one = (name: string) => {
    const v = params[name];
    return (Array.isArray(v) ? v[0] : v) ?? '';
  };
  const member = one('member').slice(0, 320);
  const action = one('action');
  const before = one('before');
  return {
    member,
    action: (AUDIT_ACTIONS as readonly string[]).includes(action) ? action : '',
    ...(/^\d{1,15}$/.test(before) ? { before: Number(before) } : {}),
  };
}

/** A page of the /audit table: newest first, AUDIT_PAGE_SIZE entries, `next` is the `before` of the following page. */
export async function auditPage(accountId: number, f: AuditFilters) {
  const q = { before: f.before, actor: f.member || undefined, action: f.action || undefined };
  const db = await getDb();
  const found = await listAuditEntries(db, accountId, { ...q, limit: AUDIT_PAGE_SIZE + 1 });
  const entries = found.slice(0, AUDIT_PAGE_SIZE).map(toEntry);
  return { entries, next: found.length > AUDIT_PAGE_SIZE ? entries[entries.length - 1]!.id : null };
}

/** The choices of the "Member" filter: the account's members, every actor the log names, `cli` and `system`. */
export async function auditActors(accountId: number): Promise<string[]> {
  const db = await getDb();
  const [members, seen] = await Promise.all([listMembers(db, accountId), listAuditActors(db, accountId)]);
  const people = [...new Set([...members.map((m) => m.email), ...seen])].filter((a) => a !== CLI.actor && a !== SYSTEM.actor);
  return [...people.sort((a, b) => a.localeCompare(b)), CLI.actor, SYSTEM.actor];
}

export const auditActions = (): readonly string[] => AUDIT_ACTIONS;

/** CLI `audit list --account ID [--limit N]`: the newest entries. */
export async function listAudit(input: { accountId: unknown; limit?: unknown }) {
  const r = AuditListInput.safeParse(input);
  if (!r.success) {
    const errors = issueParams(r.error, { names: { accountId: 'account' } });
    throw new AppError('invalid_request', describeIssues(errors), { errors });
  }
  const db = await getDb();
  if (!(await getAccountById(db, r.data.accountId))) throw new AppError('not_found', `No account with id ${r.data.accountId}.`);
  const found = await listAuditEntries(db, r.data.accountId, { limit: r.data.limit });
  return { entries: found.map(({ at, actor, action, target, ip }) => ({ at, actor, action, target, ip })) };
}

/** The retention pruner's step: one batch of entries older than `days`; true when more may be due. */
export async function pruneAuditBatch(days: number, batch = 1000): Promise<{ deleted: number; more: boolean }> {
  const deleted = await pruneAuditLog(await getDb(), days, batch);
  return { deleted, more: deleted >= batch };
}
