import { createHash } from 'node:crypto';
import { getDb } from '../../db/client';
import { getOrInsertChannelByName } from '../../db/queries/channels';
import { findSentThreadConversation, findTaggedConversation, findThreadConversation } from '../../db/queries/inbound-mail';
import type { ReadMail } from '../documents/mail';
import { cleanAddress } from '../documents/mail-address';
import { asksForPerson } from '../conversations/handoff-phrases';
import { MAX_MESSAGE_ATTACHMENTS, MAX_QUESTION_CHARS } from '../limits/text';
import { isAppError } from '../core/errors';
import { getLogger } from '../core/logger';
import { storeUploadBytes } from '../uploads/service';
import type { Visitor } from '../visitor/contract';
import { ask, askPersonByMail, leaveMessage, startConversation, titleOf } from '../visitor/service';
import { getEmailSettings } from './settings';
import { getEnv } from '../env';

/**
 * A received mail as the visitor's message (docs/contracts.md §17 "conversation"): through the
 * visitor's service, as the widget's questions are. Every id is derived from the mail (its
 * Message-ID and sender, else its stored row), so processing it again after a crash, or a copy on
 * another instance, lands in the same conversation as the same message.
 */
export const EMAIL_CHANNEL = 'Email';

const hex = (s: string) => createHash('sha256').update(s).digest('hex');

/** A UUID (version 8, RFC 9562) from a key: the same mail gives the same conversation id (and a wait the same acknowledgement key). */
export function uuidOf(key: string): string {
  const h = hex(key);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The visitor's text of a mail as one question: its new text (else its subject), cut to the question limit. */
export function questionOf(mail: ReadMail): string {
  const text = mail.text.trim() || mail.subject || '(an empty mail)';
  return text.length > MAX_QUESTION_CHARS ? `${text.slice(0, MAX_QUESTION_CHARS - 1)}…` : text;
}

/** The message's text: the mail's question, then a line for each file not kept, both within the question limit. */
function withNotes(question: string, notes: string[]): string {
  if (notes.length === 0) return question;
  const tail = `\n\n${notes.join('\n')}`;
  const room = MAX_QUESTION_CHARS - tail.length;
  return `${question.length > room ? `${question.slice(0, room - 1)}…` : question}${tail}`;
}

/** Refusals of the upload rules (type, size, quota): the file is left out, the mail still processed. */
const REFUSED = new Set(['unsupported_media_type', 'payload_too_large']);

/**
 * The mail's files as uploads of the visitor who sends it, each through the widget's rules and
 * storage (lib/uploads `storeUploadBytes`), with ids derived from the mail and the file's place in
 * it: a mail processed again stores none twice, and names only those not on its message yet. A
 * file the rules refuse gets a line in the message instead (docs/decisions/email.md).
 */
async function uploadsOfMail(visitor: Visitor, mailKey: string, mail: ReadMail): Promise<{ ids: string[]; notes: string[] }> {
  const ids: string[] = [];
  const notes: string[] = [];
  for (const [i, a] of mail.attachments.entries()) {
    try {
      const upload = await storeUploadBytes(visitor.accountId, {
        id: uuidOf(`${mailKey}\nattachment\n${i}`),
        visitorId: visitor.visitorId,
        filename: a.filename,
        bytes: a.content,
      });
      if (!upload.conversation_id) ids.push(upload.id);
    } catch (e) {
      if (!isAppError(e) || !REFUSED.has(e.code)) throw e;
      getLogger().info({ accountId: visitor.accountId, code: e.code }, `mail attachment not kept: ${e.message}`);
      notes.push(`[Attachment not kept: ${e.message}]`);
    }
  }
  const more = mail.attachmentsLeftOut;
  if (more > 0) notes.push(`[${more} more ${more === 1 ? 'attachment' : 'attachments'} not kept: at most ${MAX_MESSAGE_ATTACHMENTS} files per message.]`);
  return { ids, notes };
}

/** The mail's sender as a visitor of the account's Email channel. */
async function mailVisitor(accountId: number, sender: string): Promise<Visitor> {
  const channelId = await getOrInsertChannelByName(await getDb(), accountId, EMAIL_CHANNEL);
  return { accountId, visitorId: `email:${sender}`, clientId: null, channelId };
}

/**
 * The mail's conversation: the one its thread names (In-Reply-To or References matching a mail svc
 * received), whoever sends the reply, else a new one; then its text asked as the visitor's message
 * (a resolved conversation reopens, as in the widget). `rowId` identifies a mail without Message-ID;
 * `toPerson`: the mail went to a person, not the AI (its conversation waits for one).
 */
export async function conversationFromMail(
  accountId: number,
  rowId: number,
  envelopeFrom: string,
  mail: ReadMail,
  tag: string | null,
): Promise<{ conversationId: string; clientMessageId: string; toPerson: boolean }> {
  const sender = mail.from?.address ?? cleanAddress(envelopeFrom) ?? 'unknown';
  const key = mail.messageId ? `${sender}\n${mail.messageId}` : `row\n${rowId}`;
  const question = questionOf(mail);
  const cmid = `mail-${hex(key).slice(0, 40)}`;
  const { ai_answers } = await getEmailSettings(accountId);
  // Mail that must never be answered is kept for the team: no AI, no person paged (no loops). With
  // "AI answers email" off, every mail waits for a person. True when the mail went to a person.
  const deliver = async (visitor: Visitor, conversationId: string): Promise<boolean> => {
    const files = await uploadsOfMail(visitor, `${accountId}\nmail\n${key}`, mail);
    const req = { conversation_id: conversationId, client_message_id: cmid, text: withNotes(question, files.notes), attachments: files.ids };
    if (neverAnswered(mail, sender)) {
      await leaveMessage(visitor, req);
      return false;
    }
    // A mail that asks for a person reaches the team whatever the widget's handoff switch says; so does one whose body could not be read (the AI has nothing to answer).
    if (ai_answers && !asksForPerson(question) && !mail.unreadable) {
      await ask(visitor, () => {}, req, NO_ADMISSION);
      return false;
    }
    await askPersonByMail(visitor, req);
    return true;
  };
  const thread = await threadOf(accountId, mail, tag);
  if (thread?.visitor_id) {
    // The thread's visitor asks: a reply from another address (a colleague, an alias) joins it too.
    const visitor: Visitor = { accountId, visitorId: thread.visitor_id, clientId: null, channelId: thread.channel_id };
    return { conversationId: thread.id, clientMessageId: cmid, toPerson: await deliver(visitor, thread.id) };
  }
  const visitor = await mailVisitor(accountId, sender);
  const conversationId = uuidOf(`${accountId}\nmail\n${key}`);
  await startConversation(visitor, { id: conversationId, title: mail.subject ? titleOf(mail.subject) : titleOf(question), email: sender });
  return { conversationId, clientMessageId: cmid, toPerson: await deliver(visitor, conversationId) };
}

/** The conversation a mail continues: by the ids it replies to (mail svc received, then mail svc sent), else by the tagged address it was sent to. */
async function threadOf(accountId: number, mail: ReadMail, tag: string | null) {
  const db = await getDb();
  const ids = threadIds(mail);
  return (
    (await findThreadConversation(db, accountId, ids)) ??
    (await findSentThreadConversation(db, accountId, ids)) ??
    (tag ? await findTaggedConversation(db, accountId, tag) : null)
  );
}

/** The Message-IDs a reply names, the one it answers first; never its own. */
function threadIds(mail: ReadMail): string[] {
  const ids = [...new Set([mail.inReplyTo, ...mail.references.slice().reverse()].filter((x): x is string => !!x))];
  return ids.filter((id) => id !== mail.messageId);
}

/** The listener charged the sender's and the account's rates already (lib/email/listener.ts). */
const NO_ADMISSION = { check: async () => {}, overlap: false };

/** Addresses that answer by themselves, whatever the domain. */
const ROBOT_SENDER = /^(?:mailer-daemon|postmaster|no-?reply|do-?not-?reply)@/;

/**
 * Mail never answered (docs/contracts.md §17): auto-replies and bulk mail by their headers, robot
 * senders, and mail from svc's own sending addresses (its MAIL_FROM, anything at INBOUND_MAIL_DOMAIN).
 */
export function neverAnswered(mail: ReadMail, sender: string): boolean {
  if (mail.automatic || ROBOT_SENDER.test(sender)) return true;
  const env = getEnv();
  const own = /<([^<>]+)>\s*$/.exec(env.MAIL_FROM)?.[1] ?? env.MAIL_FROM;
  return sender === own.trim().toLowerCase() || sender.endsWith(`@${env.INBOUND_MAIL_DOMAIN.toLowerCase()}`);
}
