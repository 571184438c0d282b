import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client';
import { ensureConversationTag } from '../../db/queries/inbound-mail';
import type { MailInput } from '../../db/queries/mails';
import { getEnv } from '../env';
import { addressOf, freshTag } from './address';

/** Where svc's mail sits in a conversation's mail thread: the conversation and the mail it answers. */
export type ThreadPlace = {
  accountId: number;
  conversationId: string;
  inboundLocal: string;
  /** The mail answered: `In-Reply-To` its Message-ID, `References` its thread. */
  messageId: string | null;
  threadIds: string[] | null;
};

/**
 * The one way svc's mail joins a conversation's thread (docs/contracts.md §17): a Message-ID at
 * INBOUND_MAIL_DOMAIN (recorded, so replies thread back), `In-Reply-To`/`References`, `From` the
 * given name, `Reply-To` the conversation's tagged address; `automatic` marks the AI's own mail.
 */
export async function threadOf(
  tx: Db,
  p: ThreadPlace,
  o: { fromName: string; automatic: boolean; responseId: string | null; conversationMessageId?: string },
): Promise<NonNullable<MailInput['thread']>> {
  const tag = await ensureConversationTag(tx, p.accountId, p.conversationId, freshTag());
  return {
    messageId: `<${randomUUID()}@${getEnv().INBOUND_MAIL_DOMAIN}>`,
    conversationId: p.conversationId,
    responseId: o.responseId,
    ...(o.conversationMessageId ? { conversationMessageId: o.conversationMessageId } : {}),
    headers: {
      fromName: o.fromName,
      inReplyTo: p.messageId,
      references: (p.threadIds ?? []).slice(-20),
      replyTo: addressOf(p.inboundLocal, tag),
      ...(o.automatic ? { automatic: true } : {}),
    },
  };
}
