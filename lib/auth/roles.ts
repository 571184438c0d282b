import { z } from 'zod';
import { AppError } from '../core/errors';

/**
 * Who may do what (docs/contracts.md §13), the one table every door reads: dashboard pages (a refused page
 * is the 404 page), server actions and the Customer API with a session (403), sockets.
 */
export const RoleSchema = z.enum(['owner', 'admin', 'agent'], { error: 'must be owner, admin or agent' });
export type Role = z.infer<typeof RoleSchema>;

const EVERYONE = ['owner', 'admin', 'agent'] as const;
const MANAGERS = ['owner', 'admin'] as const;

const RULES = {
  /** Overview, conversations, responses, transcripts, attachments, insights, the inbox. */
  'records.read': EVERYONE,
  'knowledge.read': EVERYONE,
  'knowledge.write': MANAGERS,
  'bot.manage': MANAGERS,
  'widget.manage': MANAGERS,
  'api_keys.manage': MANAGERS,
  'webhooks.manage': MANAGERS,
  /** /email: the inbound address and what happens to mail. */
  'email.manage': MANAGERS,
  'team.manage': MANAGERS,
  /** /audit: the account's audit log (docs/contracts.md §18). */
  'audit.read': MANAGERS,
  /** /privacy: retention, erasing and exporting a visitor's data. */
  'privacy.manage': MANAGERS,
  /** Transferring ownership and requiring two-factor sign-in. */
  'team.own': ['owner'],
  /** Deleting the account with everything in it (docs/contracts.md §18). */
  'account.delete': ['owner'],
} as const satisfies Record<string, readonly Role[]>;

export type Action = keyof typeof RULES;

export function can(role: Role, action: Action): boolean {
  return (RULES[action] as readonly Role[]).includes(role);
}

/** Throws the 403 of a refused action. */
export function requireRole(member: { role: Role }, action: Action): void {
  if (!can(member.role, action)) throw new AppError('forbidden', 'Your role in this account does not allow this.');
}

/** What a role may assign: an admin cannot make an owner (only a transfer does). */
export function canAssignRole(actor: Role, role: Role): boolean {
  return role !== 'owner' && can(actor, 'team.manage');
}
