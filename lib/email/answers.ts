import { randomUUID } from 'node:crypto';
import { getDb, type Db } from '../../db/client';
import { countAnswerMailsTo, ensureConversationTag, listPendingEmailAnswers, markEmailAnswer, type PendingEmailAnswer } from '../../db/queries/inbound-mail';
import { insertAnswerMail } from '../../db/queries/mails';
import { requestHandoff } from '../conversations/handoff';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { emailAnswerMail } from '../mail/templates';
import { wakeMailWorker } from '../mail/worker';
import { addressOf, freshTag } from './address';

/**
 * The AI's answers by mail (docs/contracts.md §17 "answering"), one loop on every instance: each
 * answer of a mail conversation is handled once (email_answers, and the outbox's unique answer
 * column): mailed in the thread, or — declined — the conversation waits for a person with no AI
 * mail, or not mailed (a person handles the conversation; the sender got
 * EMAIL_ANSWERS_PER_SENDER_PER_HOUR answers this hour).
 */
const BATCH = 20;
const POLL_MS = 2000;

const loop = processLoop('svc.emailAnswers');

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
  const to = p.visitor_email ?? p.mail_from;
  if (p.handled_by === 'human' || !to || !p.inbound_local) {
    await markEmailAnswer(db, p.account_id, p.response_id, 'not_mailed');
    return;
  }
  if (p.declined) {
    // Nothing in the knowledge base: the team answers, and the visitor gets no AI mail.
    await requestHandoff({ accountId: p.account_id, conversationId: p.conversation_id }, { byMail: true });
    await markEmailAnswer(db, p.account_id, p.response_id, 'handed_off');
    return;
  }
  if ((await countAnswerMailsTo(db, to)) >= getEnv().EMAIL_ANSWERS_PER_SENDER_PER_HOUR) {
    await markEmailAnswer(db, p.account_id, p.response_id, 'not_mailed');
    return;
  }
  const sources = ((p.sources as Array<{ title?: unknown }> | null) ?? []).map((s) => String(s.title ?? '')).filter(Boolean);
  const written = await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    if (!(await markEmailAnswer(tx, p.account_id, p.response_id, 'mailed'))) return false;
    const tag = await ensureConversationTag(tx, p.account_id, p.conversation_id, freshTag());
    const mail = emailAnswerMail(to, { accountName: p.account_name, subject: p.mail_subject ?? '', answer: p.answer, sources: [...new Set(sources)] });
    return insertAnswerMail(tx, p.account_id, {
      ...mail,
      thread: {
        messageId: `<${randomUUID()}@${getEnv().INBOUND_MAIL_DOMAIN}>`,
        conversationId: p.conversation_id,
        responseId: p.response_id,
        headers: {
          fromName: p.account_name.slice(0, 100),
          inReplyTo: p.mail_message_id,
          references: (p.mail_thread_ids ?? []).slice(-20),
          replyTo: addressOf(p.inbound_local!, tag),
        },
      },
    });
  });
  if (written) wakeMailWorker();
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
