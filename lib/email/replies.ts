import type { Db } from '../../db/client';
import { getReplyMailFacts } from '../../db/queries/inbound-mail';
import { markReplyMailed } from '../../db/queries/handoff-mail';
import { insertMail } from '../../db/queries/mails';
import { replyAsMember, type ReplyMailer } from '../conversations/handoff';
import type { Member } from '../conversations/handoff-contract';
import { memberReplyMail } from '../mail/templates';
import { wakeMailWorker } from '../mail/worker';
import { threadOf } from './thread';

/**
 * Members' replies by mail (docs/contracts.md §17 "members"): a reply in an email conversation
 * (its visitor `email:<address>`) is also a mail in the customer's thread, written to the durable
 * outbox in the reply's own transaction — `From` the member's and the account's names, `Reply-To`
 * the conversation's tagged address, `Re: <subject>`, `In-Reply-To`/`References` the last mail
 * received, a Message-ID at INBOUND_MAIL_DOMAIN (so the answer threads back). Notes never mail.
 */
export const mailMemberReply: ReplyMailer = async (tx: Db, r) => {
  const f = await getReplyMailFacts(tx, r.accountId, r.conversationId);
  if (!f?.visitor_id?.startsWith('email:') || !f.inbound_local) return false;
  const to = f.visitor_email ?? f.visitor_id.slice('email:'.length);
  if (!to.includes('@')) return false;
  const mail = memberReplyMail(to, { accountName: f.account_name, subject: f.mail_subject ?? f.title, text: r.text });
  const place = {
    accountId: r.accountId,
    conversationId: r.conversationId,
    inboundLocal: f.inbound_local,
    messageId: f.mail_message_id,
    threadIds: f.mail_thread_ids,
  };
  const thread = await threadOf(tx, place, {
    fromName: fromNameOf(r.memberName, f.account_name),
    automatic: false,
    responseId: null,
    conversationMessageId: r.messageId,
  });
  await insertMail(tx, r.accountId, { ...mail, thread });
  await markReplyMailed(tx, r.accountId, r.messageId);
  return true;
};

/** "Ada (Acme)": the member's name and the account's, one line, bounded (nodemailer quotes it). */
export function fromNameOf(member: string, account: string): string {
  const line = (s: string, max: number) =>
    s
      .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, max);
  const m = line(member, 60);
  const a = line(account, 60);
  return m && a && m !== a ? `${m} (${a})` : m || a;
}

/** "Reply" as the inbox calls it: the member's reply, mailed when the conversation came by mail. */
export async function replyByMember(member: Member, input: unknown) {
  const r = await replyAsMember(member, input, mailMemberReply);
  if (r.message.mail) wakeMailWorker();
  return r;
}
