import { z } from 'zod';

/**
 * The audit log's events (docs/contracts.md §18), one name per kind of change. The README's
 * "Audit log" section lists them; a new audited change is a new name here.
 */
export const AUDIT_ACTIONS = [
  'member.signed_in',
  'member.sign_in_failed',
  'member.created',
  'member.invited',
  'member.invitation_revoked',
  'member.joined',
  'member.role_changed',
  'member.removed',
  'account.ownership_transferred',
  'account.two_factor_required_changed',
  'api_key.created',
  'api_key.revoked',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'widget_client.created',
  'widget_client.updated',
  'widget_client.deleted',
  'bot.settings_changed',
  'model.settings_changed',
  'handoff.settings_changed',
  'email.settings_changed',
  'email.test_sent',
  'retention.changed',
  'visitor.erased',
  'visitor.exported',
  'account.deleted',
] as const;
export const AuditAction = z.enum(AUDIT_ACTIONS);
export type AuditAction = z.infer<typeof AuditAction>;

/**
 * Who made a change and from where, as the door knows it: a signed-in member (their email and the
 * request's client address), the operator's CLI (`cli`, no address) or svc itself (`system`).
 * Every audited service takes one as its first argument, so no door can leave it out.
 */
export type AuditBy = { actor: string; ip: string | null };
export const CLI: AuditBy = Object.freeze({ actor: 'cli', ip: null });
export const SYSTEM: AuditBy = Object.freeze({ actor: 'system', ip: null });

/** A member's change: their email and the client address the server stamped ('unknown': none). */
export function memberBy(email: string, ip: string | null | undefined): AuditBy {
  return { actor: email, ip: ip && ip !== 'unknown' ? ip : null };
}

export type AuditEntry = { id: number; at: string; actor: string; action: string; target: string; ip: string | null };

/** Targets are names and ids, never secrets; a long one (a URL) is cut to this many characters. */
export const MAX_TARGET_CHARS = 500;

/** CLI `audit list` (docs/contracts.md §18). */
export const AuditListInput = z.object({
  accountId: z.coerce.number().int().positive().max(2_147_483_647),
  limit: z.coerce.number().int().min(1, 'must be 1–1000').max(1000, 'must be 1–1000').default(50),
});
