import { getDb } from '../../db/client';
import { withAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';
import { findTaggedConversation, getAccountByInboundLocal, setInboundLocal } from '../../db/queries/inbound-mail';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { addressOf, freshLocal } from '../mail/address';
export { addressOf, freshTag } from '../mail/address';

/**
 * The accounts' inbound addresses (docs/contracts.md §17): `<local>@INBOUND_MAIL_DOMAIN`, the local
 * part 16 random base-32 characters (80 bits: unguessable), made when first asked for.
 */

/** The account's inbound address, made on first use. */
export async function inboundAddress(accountId: number): Promise<{ address: string }> {
  const local = await setInboundLocal(await getDb(), accountId, freshLocal(), false);
  if (!local) throw new AppError('not_found', `No account with id ${accountId}.`);
  return { address: addressOf(local) };
}

/** A new inbound address; the old one refuses mail from now on (550 at RCPT). */
export async function regenerateInboundAddress(by: AuditBy, accountId: number): Promise<{ address: string }> {
  const local = await withAudit(
    accountId,
    by,
    'email.settings_changed',
    (tx) => setInboundLocal(tx, accountId, freshLocal(), true),
    (l) => (l ? 'inbound address regenerated' : null),
  );
  if (!local) throw new AppError('not_found', `No account with id ${accountId}.`);
  return { address: addressOf(local) };
}

export type Recipient = { accountId: number; local: string; tag: string | null };
export type RecipientRefusal = { code: 550 | 553; message: string };

/**
 * Whose address a `RCPT TO` names: an account's `<local>@INBOUND_MAIL_DOMAIN` (any case), or
 * `<local>+<tag>@…` with a tag svc issued, or a refusal. Another domain is refused as relaying.
 */
export async function recipientOf(address: string): Promise<Recipient | RecipientRefusal> {
  const at = address.lastIndexOf('@');
  if (at <= 0) return { code: 553, message: '5.1.3 Not an address' };
  const domain = address.slice(at + 1).toLowerCase();
  if (domain !== getEnv().INBOUND_MAIL_DOMAIN.toLowerCase())
    return { code: 550, message: '5.7.1 Relaying denied: this server takes mail for its own addresses only' };
  const [local, tag = null] = address.slice(0, at).toLowerCase().split('+', 2) as [string, string?];
  const none = { code: 550, message: '5.1.1 No such mailbox' } as const;
  if (!/^[a-z2-7]{12,64}$/.test(local) || (tag !== null && !/^[a-z2-7]{8,32}$/.test(tag))) return none;
  const db = await getDb();
  const accountId = await getAccountByInboundLocal(db, local);
  if (accountId === null) return none;
  // A tag is the Reply-To svc gave one conversation in its mails; any other is refused.
  if (tag !== null && !(await findTaggedConversation(db, accountId, tag))) return none;
  return { accountId, local, tag };
}
