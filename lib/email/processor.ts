import { getDb, type Db } from '../../db/client';
import {
  claimInboundMails,
  failInboundMail,
  findTaggedConversation,
  finishInboundMail,
  finishTestMail,
  type ClaimedInboundMail,
} from '../../db/queries/inbound-mail';
import { failNewestConversationMail, failReportedMails, type ReportedMail } from '../../db/queries/mails';
import { publishInboxEvent } from '../conversations/events';
import type { DeliveryReport } from '../documents/mail';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { readMailInWorker } from '../documents/pool';
import { wakeMailWorker } from '../mail/worker';
import { acknowledgeWaiting } from './answers';
import { conversationFromMail } from './conversation';
import { isSvcTestMail } from './svc-test';

/**
 * Processing of stored inbound mail, one loop on every instance (docs/decisions/email.md): a lease
 * per message (FOR UPDATE SKIP LOCKED), so each is processed by one instance, and again by another
 * when its instance died mid-way (the lease lapses). Each mail is read off the main thread
 * (lib/documents/mail.ts, in the document pool).
 */
const BATCH = 10;
/** Attempts before a message that keeps failing is set aside as `failed` (kept, readable). */
const MAX_ATTEMPTS = 5;

const loop = processLoop('svc.inboundMail');

async function processOne(db: Db, m: ClaimedInboundMail): Promise<void> {
  try {
    const mail = await readMailInWorker(m.raw);
    // svc's own test mail only says the listener works: no conversation, never answered, nobody paged.
    if (isSvcTestMail(m.account_id, mail)) {
      await finishTestMail(db, m.account_id, m.id, { messageId: mail.messageId, fromAddress: mail.from?.address ?? null, subject: mail.subject || null });
      return;
    }
    // A delivery report is no conversation (it reports on a mail svc sent).
    const tag = m.recipient.includes('+') ? m.recipient.slice(m.recipient.indexOf('+') + 1) : null;
    const started = mail.report ? null : await conversationFromMail(m.account_id, m.id, m.envelope_from, mail, tag);
    const headers = {
      messageId: mail.messageId,
      fromAddress: mail.from?.address ?? null,
      subject: mail.subject || null,
      conversationId: started?.conversationId ?? null,
      clientMessageId: started?.clientMessageId ?? null,
      // What an answer's References carry: the thread so far and this mail.
      threadIds: [...mail.references, ...(mail.messageId ? [mail.messageId] : [])].slice(-20),
    };
    const { reported, acknowledged } = await db.transaction(async (txRaw) => {
      const tx = txRaw as unknown as Db;
      const failed = mail.delivery?.failed ? await failReported(tx, m.account_id, mail.delivery, tag) : [];
      const done = (await finishInboundMail(tx, m.account_id, m.id, headers)) === 'done';
      // In the transaction that marks the mail done: a crash never loses the acknowledgement, and its key keeps it to one.
      const ack =
        done && started?.toPerson
          ? await acknowledgeWaiting(tx, m.account_id, started.conversationId, {
              from: headers.fromAddress,
              messageId: headers.messageId,
              subject: headers.subject,
              threadIds: headers.threadIds,
            })
          : false;
      return { reported: failed, acknowledged: ack };
    });
    if (acknowledged) wakeMailWorker();
    for (const r of reported) {
      if (r.conversation_id && r.conversation_message_id)
        publishInboxEvent({
          account_id: r.account_id,
          conversation_id: r.conversation_id,
          kind: 'mail',
          mail: { message_id: r.conversation_message_id, state: 'failed', error: mail.delivery!.reason },
        });
    }
  } catch (e) {
    const final = m.attempts >= MAX_ATTEMPTS;
    getLogger().warn({ err: e, inboundMailId: m.id, final }, `inbound mail ${m.id}: processing failed${final ? '; set aside' : '; retrying after its lease'}`);
    await failInboundMail(db, m.account_id, m.id, (e as Error).message ?? String(e), final);
  }
}

/**
 * A delivery report's failure marks the mail it reports on as failed: by the returned message's
 * Message-ID, else (it names none) the newest mail of the conversation whose tagged address it came
 * to. Only mails of the account that received the report.
 */
async function failReported(tx: Db, accountId: number, d: DeliveryReport, tag: string | null): Promise<ReportedMail[]> {
  if (d.messageIds.length > 0) return failReportedMails(tx, accountId, d.messageIds, d.reason);
  const thread = tag ? await findTaggedConversation(tx, accountId, tag) : null;
  return thread ? failNewestConversationMail(tx, accountId, thread.id, d.reason) : [];
}

/** One pass: claims a batch and processes it; true when a full batch suggests more is waiting. */
export async function processInboundMail(): Promise<boolean> {
  const db = await getDb();
  const batch = await claimInboundMails(db, BATCH, getEnv().INBOUND_MAIL_LEASE_SECONDS);
  // One sender's mails one after another in arrival order (the next finds the conversation the last
  // one started); different senders at once, so one slow mail holds up only its own sender. Two
  // senders in one thread within a batch may race, as two instances' batches always could
  // (docs/decisions/email.md "Processing").
  const bySender = new Map<string, ClaimedInboundMail[]>();
  for (const m of [...batch].sort((a, b) => a.id - b.id)) {
    const key = `${m.account_id}\n${m.envelope_from.toLowerCase()}`;
    bySender.set(key, [...(bySender.get(key) ?? []), m]);
  }
  const done = await Promise.allSettled(
    [...bySender.values()].map(async (mails) => {
      for (const m of mails) await processOne(db, m);
    }),
  );
  const failed = done.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return batch.length === BATCH;
}

export function startInboundProcessor(): void {
  loop.start({
    pollMs: 5000,
    step: () => processInboundMail(),
    onDown: (e) => getLogger().error({ err: e }, 'inbound mail: a pass failed; retrying'),
  });
}

export async function stopInboundProcessor(): Promise<void> {
  await loop.stop();
}

/** A message was stored: process it now rather than at the next poll. */
export function wakeInboundProcessor(): void {
  loop.wake();
}
