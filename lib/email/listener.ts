import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { getDb } from '../../db/client';
import { insertInboundMail } from '../../db/queries/inbound-mail';
import { getLogger } from '../core/logger';
import { processSingleton } from '../core/process';
import { getEnv } from '../env';
import { getLimiter } from '../limits/limiter';
import { recipientOf, type Recipient } from './address';
import { wakeInboundProcessor } from './processor';

/**
 * svc's SMTP listener (docs/contracts.md §17, docs/decisions/email.md), one in every process when
 * INBOUND_SMTP_PORT is set, through smtp-server (a maintained library: the protocol is not ours to
 * write). Recipients are checked at `RCPT` (550: never a relay), the size at `MAIL FROM` (SIZE) and
 * while the data arrives (552), the rates per sender and per account (451: try later), and `250`
 * comes only once the raw message is stored; the processor (./processor.ts) reads it from there.
 */

/** Recipients one message may name (each an account that gets its own copy). */
const MAX_RECIPIENTS = 10;
/** Messages whose data may be in memory at once on this process; more are told to try later. */
const MAX_DATA_IN_FLIGHT = 8;
/** Open SMTP connections per process. */
const MAX_CLIENTS = 200;

/** What `RCPT` found for each address (smtp-server resets the envelope per message; this map outlives it, keyed by address). */
type Session = SMTPServerSession & { svcRecipients?: Map<string, Recipient> };

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

const perSender = () => getLimiter('inbound-mail:sender', { points: getEnv().INBOUND_MAILS_PER_SENDER_PER_MINUTE, durationSeconds: 60 });
const perAccount = () => getLimiter('inbound-mail:account', { points: getEnv().INBOUND_MAILS_PER_ACCOUNT_PER_MINUTE, durationSeconds: 60 });

export type InboundListener = { port: number; close: () => Promise<void> };

/**
 * Where this process's own listener takes mail (the /email test mail goes there); null when it runs
 * none. On globalThis: the server starts the listener, the page's server action (Next's bundle, its
 * own copy of this module) reads it.
 */
const ownSlot = () => processSingleton('svc.inboundListener', (): { at: { host: string; port: number } | null } => ({ at: null }));
export const ownInboundListener = () => ownSlot().at;

export async function startInboundListener(): Promise<InboundListener | null> {
  const env = getEnv();
  if (env.INBOUND_SMTP_PORT === undefined) return null;
  const tls = env.INBOUND_SMTP_TLS_CERT && env.INBOUND_SMTP_TLS_KEY;
  let inFlight = 0;
  const server = new SMTPServer({
    name: env.INBOUND_MAIL_DOMAIN,
    banner: 'svc',
    size: env.INBOUND_MAIL_MAX_BYTES,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? { key: fs.readFileSync(env.INBOUND_SMTP_TLS_KEY!), cert: fs.readFileSync(env.INBOUND_SMTP_TLS_CERT!) } : {}),
    maxClients: MAX_CLIENTS,
    socketTimeout: 60_000,
    closeTimeout: 10_000,
    logger: false,
    // The client's name from reverse DNS is used nowhere: no lookup (up to 1.5 s before every greeting, a query per connection anyone opens).
    disableReverseLookup: true,
    onMailFrom(address, session: Session, cb) {
      session.svcRecipients = new Map(); // a new message: at most MAX_RECIPIENTS entries
      if (address.args && typeof address.args === 'object' && Number((address.args as Record<string, string>).SIZE) > env.INBOUND_MAIL_MAX_BYTES) {
        return cb(smtpError(552, `5.3.4 Message too big: at most ${env.INBOUND_MAIL_MAX_BYTES} bytes`));
      }
      const sender = address.address.toLowerCase();
      perSender()
        .consume(sender)
        .then(
          (r) => cb(r.allowed ? undefined : smtpError(451, `4.7.1 Too many messages from ${sender}; try again in ${r.retryAfterSeconds} s`)),
          () => cb(smtpError(451, '4.3.0 Temporarily unable to take mail; try again later')),
        );
    },
    onRcptTo(address, session: Session, cb) {
      const known = (session.svcRecipients ??= new Map());
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) return cb(smtpError(452, `4.5.3 At most ${MAX_RECIPIENTS} recipients per message`));
      recipientOf(address.address)
        .then(async (r) => {
          if ('code' in r) return cb(smtpError(r.code, r.message));
          const charged = await perAccount().consume(String(r.accountId));
          if (!charged.allowed) return cb(smtpError(451, `4.7.1 This mailbox takes no more mail right now; try again in ${charged.retryAfterSeconds} s`));
          known.set(address.address.toLowerCase(), r);
          cb();
        })
        .catch((e: unknown) => {
          getLogger().warn({ err: e }, 'inbound mail: a recipient could not be checked');
          cb(smtpError(451, '4.3.0 Temporarily unable to check the recipient; try again later'));
        });
    },
    onData(stream: SMTPServerDataStream, session: Session, cb) {
      if (inFlight >= MAX_DATA_IN_FLIGHT) {
        stream.on('end', () => cb(smtpError(451, '4.3.2 Busy; try again shortly')));
        stream.resume();
        return;
      }
      inFlight++;
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= env.INBOUND_MAIL_MAX_BYTES) chunks.push(c);
      });
      stream.on('end', () => {
        const done = (e?: Error) => {
          inFlight--;
          cb(e);
        };
        if (stream.sizeExceeded || size > env.INBOUND_MAIL_MAX_BYTES)
          return done(smtpError(552, `5.3.4 Message too big: at most ${env.INBOUND_MAIL_MAX_BYTES} bytes`));
        const raw = Buffer.concat(chunks);
        store(session, raw).then(
          () => done(),
          (e: unknown) => {
            getLogger().error({ err: e }, 'inbound mail: a message could not be stored; the sender will retry');
            done(smtpError(451, '4.3.0 Temporarily unable to store the message; try again later'));
          },
        );
      });
    },
  });
  server.on('error', (e) => getLogger().warn({ err: e }, 'inbound mail: SMTP connection error'));
  const host = env.INBOUND_SMTP_HOST ?? env.HOST;
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(env.INBOUND_SMTP_PORT, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  getLogger().info({ port }, `inbound mail: SMTP listener on ${host}:${port} for @${env.INBOUND_MAIL_DOMAIN}`);
  // A wildcard bind is reached on the loopback address.
  ownSlot().at = { host: host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host, port };
  return {
    port,
    close: () => {
      ownSlot().at = null;
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One row per recipient account, in one transaction: the `250` means every copy is stored. */
async function store(session: Session, raw: Buffer): Promise<void> {
  const byAccount = new Map<number, Recipient>();
  for (const a of session.envelope.rcptTo) {
    const r = session.svcRecipients?.get(a.address.toLowerCase());
    if (r && !byAccount.has(r.accountId)) byAccount.set(r.accountId, r);
  }
  const recipients = [...byAccount.values()];
  const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
  const db = await getDb();
  await db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as typeof db;
    for (const r of recipients) await insertInboundMail(tx, r.accountId, { envelopeFrom, recipient: `${r.local}${r.tag ? `+${r.tag}` : ''}`, raw });
  });
  wakeInboundProcessor();
}
