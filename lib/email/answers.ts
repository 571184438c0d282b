import { getDb, type Db } from '../../db/client';
import { countAnswerMailsTo, getAcknowledgeFacts, listPendingEmailAnswers, markEmailAnswer, type PendingEmailAnswer } from '../../db/queries/inbound-mail';
import { insertAnswerMail, type MailInput } from '../../db/queries/mails';
import { requestHandoff } from '../conversations/handoff';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { emailAcknowledgementMail, emailAnswerMail } from '../mail/templates';
import { wakeMailWorker } from '../mail/worker';
import { uuidOf } from './conversation';
import { threadOf } from './thread';

/**
 * The AI's answers by mail (docs/contracts.md §17 "answering"), one loop on every instance: each
 * answer of a mail conversation is handled once (email_answers, and the outbox's unique answer
 * column): mailed in the thread, or — declined — the conversation waits for a person with no AI
 * mail, or not mailed (a person handles the conversation; the sender got
 * EMAIL_ANSWERS_PER_SENDER_PER_HOUR answers this hour). A mail whose conversation goes to a person
 * gets the account's acknowledgement instead, when "Acknowledge new emails" is on.
 */
const BATCH = 20;
// An answer is found this long after it is stored at most (the query reads the last hour's processed mail only, by index).
const POLL_MS = 500;

const loop = processLoop('svc.emailAnswers');

/** The mail svc answers: its sender, Message-ID, subject and thread (what threads the answer). */
export type AnsweredMail = { from: string | null; messageId: string | null; subject: string | null; threadIds: string[] | null };

export async function handleEmailAnswers(): Promise<number> {
  const db = await getDb();
  const pending = await listPendingEmailAnswers(db, BATCH);
  for (const p of pending) {
    try {
      await handleOne(db, p);
    } catch (e) {
      getLogger().warn({ err: e, responseId: p.response_id }, 'email answers: an answer was not handled; retrying at the next pass');
    }
  }
  return pending.length;
}

async function handleOne(db: Db, p: PendingEmailAnswer): Promise<void> {
  const answered: AnsweredMail = { from: p.mail_from, messageId: p.mail_message_id, subject: p.mail_subject, threadIds: p.mail_thread_ids };
  if (p.declined) {
    // The team answers (no AI mail); before the handled_by check, since another instance's handoff of this very answer sets it (the handoff is idempotent; one mark wins).
    // A person who resolved or snoozed the conversation since has dealt with it: it stays as they left it.
    if (p.status === 'Open' || p.status === 'Waiting') await requestHandoff({ accountId: p.account_id, conversationId: p.conversation_id }, { byMail: true });
    const acknowledged = await db.transaction(async (txRaw) => {
      const tx = txRaw as unknown as Db;
      return (await markEmailAnswer(tx, p.account_id, p.response_id, 'handed_off')) && acknowledgeWaiting(tx, p.account_id, p.conversation_id, answered);
    });
    if (acknowledged) wakeMailWorker();
    return;
  }
  const to = p.visitor_email ?? p.mail_from;
  if (p.handled_by === 'human' || !to || !p.inbound_local) {
    await markEmailAnswer(db, p.account_id, p.response_id, 'not_mailed');
    return;
  }
  if (await senderHadEnough(db, p.account_id, to)) {
    await markEmailAnswer(db, p.account_id, p.response_id, 'not_mailed');
    return;
  }
  const sources = ((p.sources as Array<{ title?: unknown }> | null) ?? []).map((s) => String(s.title ?? '')).filter(Boolean);
  const written = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    if (!(await markEmailAnswer(tx, p.account_id, p.response_id, 'mailed'))) return false;
    const mail = emailAnswerMail(to, { accountName: p.account_name, subject: p.mail_subject ?? '', answer: p.answer, sources: [...new Set(sources)] });
    const thread = { accountId: p.account_id, conversationId: p.conversation_id, accountName: p.account_name, inboundLocal: p.inbound_local! };
    return mailInThread(tx, thread, answered, p.response_id, mail);
  });
  if (written) wakeMailWorker();
}

/**
 * "Acknowledge new emails" (off by default): the mail's conversation now waits for a person, so its
 * sender gets one short mail in the thread saying the team got it — once per wait (the key derives
 * from waiting_since: a follow-up while it waits, a reprocessed mail or another instance writes
 * nothing more), within the sender's EMAIL_ANSWERS_PER_SENDER_PER_HOUR. The caller has checked that
 * the mail may be answered at all (never auto-replies, bulk mail, robots or svc's own addresses).
 * In the caller's transaction; true when written.
 */
export async function acknowledgeWaiting(tx: Db, accountId: number, conversationId: string, mail: AnsweredMail): Promise<boolean> {
  const f = await getAcknowledgeFacts(tx, accountId, conversationId);
  const to = f?.visitor_email ?? mail.from;
  if (!f?.acknowledge || !f.waiting_since || !f.inbound_local || !to || (await senderHadEnough(tx, accountId, to))) return false;
  const ack = emailAcknowledgementMail(to, { accountName: f.account_name, subject: mail.subject ?? '' });
  const thread = { accountId, conversationId, accountName: f.account_name, inboundLocal: f.inbound_local };
  return mailInThread(tx, thread, mail, uuidOf(`${accountId}\nacknowledge\n${conversationId}\n${f.waiting_since}`), ack);
}

/** The account's AI mailed this sender EMAIL_ANSWERS_PER_SENDER_PER_HOUR times this hour (answers and acknowledgements); per account, so no account can mute a sender at another. */
async function senderHadEnough(db: Db, accountId: number, to: string): Promise<boolean> {
  return (await countAnswerMailsTo(db, accountId, to)) >= getEnv().EMAIL_ANSWERS_PER_SENDER_PER_HOUR;
}

/** svc's own mail in the conversation's thread, to the outbox once per `key` (its unique response_id). */
async function mailInThread(
  tx: Db,
  t: { accountId: number; conversationId: string; accountName: string; inboundLocal: string },
  answered: AnsweredMail,
  key: string,
  mail: Omit<MailInput, 'thread'>,
): Promise<boolean> {
  const place = {
    accountId: t.accountId,
    conversationId: t.conversationId,
    inboundLocal: t.inboundLocal,
    messageId: answered.messageId,
    threadIds: answered.threadIds,
  };
  const thread = await threadOf(tx, place, { fromName: t.accountName.slice(0, 100), automatic: true, responseId: key });
  return insertAnswerMail(tx, t.accountId, { ...mail, thread });
}

export function startEmailAnswers(): void {
  loop.start({
    pollMs: POLL_MS,
    step: async () => (await handleEmailAnswers()) >= BATCH,
    onDown: (e) => getLogger().error({ err: e }, 'email answers: a pass failed; retrying'),
  });
}

export async function stopEmailAnswers(): Promise<void> {
  await loop.stop();
}
