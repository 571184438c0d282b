import nodemailer, { type Transporter } from 'nodemailer';
import { getDb, type Db } from '../../db/client';
import { claimDueMails, markMailDone, markMailFailed, markMailRefused, releaseMails, type ClaimedMail } from '../../db/queries/mails';
import { publishInboxEvent } from '../conversations/events';
import { getEnv } from '../env';
import { getLogger } from '../core/logger';
import { recordOutcomeWithin, startBackgroundLoop, type BackgroundLoop } from '../core/loop';
import { processSlot } from '../core/process';

/**
 * The mail sender every instance runs: it leases due mails from the outbox (FOR UPDATE SKIP
 * LOCKED, so each goes to one instance), sends them through SMTP_URL and records the outcome; a
 * failure leaves the mail pending, due again after a backoff. Without SMTP_URL each mail is
 * written to the log and kept (status `logged`). It never throws; requests never wait for it.
 */
const POLL_MS = 1000;
const BATCH = 10;

/** The backoff after the n-th failed attempt: base × 2^(n−1), at most an hour. */
export function mailRetryDelayMs(attempts: number, base = getEnv().MAIL_RETRY_BASE_MS): number {
  return Math.min(3_600_000, base * 2 ** Math.min(Math.max(attempts - 1, 0), 20));
}

type Worker = { loop: BackgroundLoop; transport: Transporter | null };
const worker = processSlot<Worker>('svc.mailWorker');

/** Connection settings unless SMTP_URL's query names them: a pool of reused connections, and bounds on a silent server. */
const SMTP_DEFAULTS: Record<string, string> = {
  pool: 'true',
  maxConnections: '4',
  connectionTimeout: '10000',
  greetingTimeout: '10000',
  socketTimeout: '30000',
  // A mail whose connection closed before its reply is tried once more on another, then left to the outbox's retry.
  maxRequeues: '1',
};

function transportFor(url: string | undefined): Transporter | null {
  if (!url) return null;
  // nodemailer takes a URL's settings from its query only (an options object beside a URL is ignored).
  const u = new URL(url);
  for (const [k, v] of Object.entries(SMTP_DEFAULTS)) if (!u.searchParams.has(k)) u.searchParams.set(k, v);
  // A plain smtp:// peer without STARTTLS (a test server, a local relay) is used as it is.
  const transport = nodemailer.createTransport(u.toString());
  // A pooled connection that fails while idle is replaced; never an unhandled 'error' event.
  transport.on('error', (e) => getLogger().warn({ err: e }, 'mail: an SMTP connection failed'));
  return transport;
}

export function startMailWorker(): void {
  if (worker.get()) return;
  const transport = transportFor(getEnv().SMTP_URL);
  const loop = startBackgroundLoop({
    pollMs: POLL_MS,
    step: async (l) => {
      const claimed = await claimDueMails(await getDb(), BATCH, getEnv().MAIL_LEASE_SECONDS);
      // One conversation's mails one after another (its customer reads them in order); the others at once, over the pool's connections.
      const threads = new Map<string, ClaimedMail[]>();
      for (const m of [...claimed].sort((a, b) => a.id - b.id)) {
        const key = m.conversation_id ?? `mail:${m.id}`;
        threads.set(key, [...(threads.get(key) ?? []), m]);
      }
      // A drain sends what is in flight; the rest go back to the outbox for another instance at once.
      const untried: number[] = [];
      const sent = await Promise.allSettled(
        [...threads.values()].map(async (mails) => {
          for (const m of mails) {
            if (l.stopping) untried.push(m.id);
            else await deliver(l, transport, m);
          }
        }),
      );
      await releaseMails(await getDb(), untried);
      const failed = sent.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return claimed.length >= BATCH;
    },
    onDown: (e) => getLogger().error({ err: e }, 'mail worker: cannot read the outbox; retrying'),
  });
  worker.set({ loop, transport });
  mailWake.set(loop.wake);
}

async function deliver(loop: BackgroundLoop, transport: Transporter | null, m: ClaimedMail): Promise<void> {
  if (!transport) {
    getLogger().info(
      { mail: { to: m.to, subject: m.subject } },
      `mail (no SMTP_URL, kept in the outbox; see \`mail list\`) to ${m.to}: ${m.subject}\n${m.text}`,
    );
    if (await recordOutcome(m, (db) => markMailDone(db, m.id, 'logged'))) publishReplyMail(m, 'sent', null);
    return;
  }
  try {
    await transport.sendMail({ ...senderOf(m), to: m.to, subject: m.subject, text: m.text, html: m.html });
  } catch (e) {
    const { responseCode: code = 0, command = '' } = e as { responseCode?: number; command?: string };
    if (code >= 500 && code < 600 && /^(RCPT|DATA)/i.test(command)) {
      // The receiving server refused this mail for good (5xx at RCPT or DATA); a 5xx at AUTH or MAIL FROM is svc's setup and is retried.
      const why = String((e as { response?: string }).response ?? (e as Error).message).slice(0, 300);
      getLogger().warn({ err: e, mailId: m.id }, `mail to ${m.to} refused for good (${why}); not sent`);
      if (await recordOutcome(m, (db) => markMailRefused(db, m.id, why))) publishReplyMail(m, 'failed', why);
      return;
    }
    const delay = mailRetryDelayMs(m.attempts);
    getLogger().warn(
      { err: e, mailId: m.id, attempts: m.attempts },
      `mail to ${m.to} not sent (${(e as Error).message}); retrying in ${Math.round(delay / 1000)} s`,
    );
    await recordOutcome(m, (db) => markMailFailed(db, m.id, (e as Error).message ?? String(e), delay));
    if (delay < POLL_MS) setTimeout(loop.wake, delay + 1).unref();
    return;
  }
  // Sent: only "sent" may be recorded now (never a failure, which would send it again).
  if (await recordOutcome(m, (db) => markMailDone(db, m.id, 'sent'))) publishReplyMail(m, 'sent', null);
}

/**
 * Records a mail's outcome, retrying while the database is away for up to half the lease (once it
 * lapses another instance sends the mail again).
 */
async function recordOutcome(m: ClaimedMail, record: (db: Db) => Promise<void>): Promise<boolean> {
  const recorded = await recordOutcomeWithin(
    (getEnv().MAIL_LEASE_SECONDS * 1000) / 2,
    async () => record(await getDb()),
    (e) => getLogger().warn({ err: e, mailId: m.id }, 'mail: outcome not recorded yet; retrying'),
  );
  if (!recorded) getLogger().error({ mailId: m.id }, `mail to ${m.to}: outcome not recorded; it may be sent again once its lease lapses`);
  return recorded;
}

/** A member reply's mail changed state: the members' inbox shows it (lib/inbox). */
function publishReplyMail(m: ClaimedMail, state: 'sent' | 'failed', error: string | null): void {
  if (!m.conversation_message_id || !m.conversation_id) return;
  publishInboxEvent({
    account_id: m.account_id,
    conversation_id: m.conversation_id,
    kind: 'mail',
    mail: { message_id: m.conversation_message_id, state, error },
  });
}

export async function stopMailWorker(): Promise<void> {
  const w = worker.get();
  if (!w) return;
  await w.loop.stop();
  w.transport?.close();
  mailWake.clear();
  worker.clear();
}

/** Wakes this process's sender after a mail was written (other instances find it by polling). */
const mailWake = processSlot<() => void>('svc.mailWake');
export function wakeMailWorker() {
  mailWake.get()?.();
}

/** From (the account's name as display name for a thread mail), and a thread mail's Message-ID and threading headers. */
function senderOf(m: ClaimedMail) {
  const from = getEnv().MAIL_FROM;
  const h = m.thread_headers;
  if (!h || !m.message_id) return { from };
  const address = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();
  return {
    from: { name: h.fromName, address },
    messageId: m.message_id,
    ...(h.inReplyTo ? { inReplyTo: h.inReplyTo } : {}),
    ...(h.references.length ? { references: h.references } : {}),
    ...(h.replyTo ? { replyTo: h.replyTo } : {}),
    // Other helpdesks and autoresponders never answer an automatic reply: no loop between two of them.
    ...(h.automatic ? { headers: { 'Auto-Submitted': 'auto-replied' } } : {}),
  };
}
