import nodemailer, { type Transporter } from 'nodemailer';
import { getDb } from '../../db/client';
import { claimDueMails, markMailDone, markMailFailed, type ClaimedMail } from '../../db/queries/mails';
import { getEnv } from '../env';
import { getLogger } from '../core/logger';
import { onDrain } from '../core/drain';
import { wakeablePause } from '../core/pause';

/**
 * The mail sender every instance runs: it leases due mails from the outbox (FOR UPDATE SKIP
 * LOCKED, so each goes to one instance), sends them through SMTP_URL and records the outcome; a
 * failure leaves the mail pending, due again after a backoff. Without SMTP_URL each mail is
 * written to the log and kept (status `logged`). It never throws; requests never wait for it.
 */
const POLL_MS = 1000;
const BATCH = 10;
const LEASE_SECONDS = 60;

/** The backoff after the n-th failed attempt: base × 2^(n−1), at most an hour. */
export function mailRetryDelayMs(attempts: number, base = getEnv().MAIL_RETRY_BASE_MS): number {
  return Math.min(3_600_000, base * 2 ** Math.min(Math.max(attempts - 1, 0), 20));
}

type Worker = { stopping: boolean; wake: () => void; loop: Promise<void>; transport: Transporter | null; unsubscribeDrain: () => void };
const KEY = Symbol.for('svc.mailWorker');
const holder = globalThis as { [KEY]?: Worker };

function transportFor(url: string | undefined): Transporter | null {
  if (!url) return null;
  // A plain smtp:// peer without STARTTLS (a test server, a local relay) is used as it is.
  return nodemailer.createTransport(url, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
}

export function startMailWorker(): void {
  if (holder[KEY]) return;
  const pause = wakeablePause(() => w.stopping);
  const w: Worker = {
    stopping: false,
    wake: pause.wake,
    loop: Promise.resolve(),
    transport: transportFor(getEnv().SMTP_URL),
    unsubscribeDrain: () => {},
  };
  const idle = pause.idle;
  w.loop = (async () => {
    let failures = 0;
    while (!w.stopping) {
      try {
        const claimed = await claimDueMails(await getDb(), BATCH, LEASE_SECONDS);
        for (const m of claimed) {
          if (w.stopping) break;
          await deliver(w, m);
        }
        failures = 0;
        if (claimed.length < BATCH) await idle(POLL_MS);
      } catch (e) {
        if (failures === 0) getLogger().error({ err: e }, 'mail worker: cannot read the outbox; retrying');
        failures++;
        await idle(Math.min(POLL_MS * 2 ** Math.min(failures, 4), 15_000));
      }
    }
  })();
  w.unsubscribeDrain = onDrain(() => {
    w.stopping = true;
    w.wake();
  });
  holder[KEY] = w;
  setMailWake(w.wake);
}

async function deliver(w: Worker, m: ClaimedMail): Promise<void> {
  const db = await getDb();
  if (!w.transport) {
    getLogger().info(
      { mail: { to: m.to, subject: m.subject } },
      `mail (no SMTP_URL, kept in the outbox; see \`mail list\`) to ${m.to}: ${m.subject}\n${m.text}`,
    );
    await markMailDone(db, m.id, 'logged');
    return;
  }
  try {
    await w.transport.sendMail({ from: getEnv().MAIL_FROM, to: m.to, subject: m.subject, text: m.text, html: m.html });
    await markMailDone(db, m.id, 'sent');
  } catch (e) {
    const delay = mailRetryDelayMs(m.attempts);
    getLogger().warn(
      { err: e, mailId: m.id, attempts: m.attempts },
      `mail to ${m.to} not sent (${(e as Error).message}); retrying in ${Math.round(delay / 1000)} s`,
    );
    await markMailFailed(db, m.id, (e as Error).message ?? String(e), delay);
    if (delay < POLL_MS) setTimeout(w.wake, delay + 1).unref();
  }
}

export async function stopMailWorker(): Promise<void> {
  const w = holder[KEY];
  if (!w) return;
  w.stopping = true;
  w.wake();
  await w.loop;
  w.transport?.close();
  w.unsubscribeDrain();
  setMailWake(undefined);
  delete holder[KEY];
}

/** Wakes this process's sender after a mail was written (other instances find it by polling). */
const WAKE = Symbol.for('svc.mailWake');
function setMailWake(fn: (() => void) | undefined) {
  (globalThis as { [WAKE]?: () => void })[WAKE] = fn;
}
export function wakeMailWorker() {
  (globalThis as { [WAKE]?: () => void })[WAKE]?.();
}
