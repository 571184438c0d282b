import { getDb, type Db } from '../../db/client';
import { claimInboundMails, failInboundMail, finishInboundMail, type ClaimedInboundMail } from '../../db/queries/inbound-mail';
import { getLogger } from '../core/logger';
import { processLoop } from '../core/loop';
import { getEnv } from '../env';
import { readMailInWorker } from '../documents/pool';
import { conversationFromMail } from './conversation';

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
    await db.transaction(async (tx) => {
      await finishInboundMail(tx as unknown as Db, m.account_id, m.id, headers);
    });
  } catch (e) {
    const final = m.attempts >= MAX_ATTEMPTS;
    getLogger().warn({ err: e, inboundMailId: m.id, final }, `inbound mail ${m.id}: processing failed${final ? '; set aside' : '; retrying after its lease'}`);
    await failInboundMail(db, m.account_id, m.id, (e as Error).message ?? String(e), final);
  }
}

/** One pass: claims a batch and processes it; true when a full batch suggests more is waiting. */
export async function processInboundMail(): Promise<boolean> {
  const db = await getDb();
  const batch = await claimInboundMails(db, BATCH, getEnv().INBOUND_MAIL_LEASE_SECONDS);
  for (const m of batch) await processOne(db, m);
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
