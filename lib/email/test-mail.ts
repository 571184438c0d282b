import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { getDb } from '../../db/client';
import { findTestMailReceived } from '../../db/queries/inbound-mail';
import { recordAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';
import { requireRole, type Role } from '../auth/roles';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { getLimiter } from '../limits/limiter';
import { inboundAddress } from './address';
import { ownInboundListener } from './listener';
import { svcTestToken } from './svc-test';

/**
 * /email "Send a test email" (docs/decisions/email.md): one mail over SMTP to this process's own
 * listener, addressed to the account's inbound address, then the stored row waited for. The
 * processor knows it by its `X-Svc-Test` header: no conversation, never answered, nobody paged.
 */

/** The page's warning when this server takes no mail, as a sentence. */
export const NOT_LISTENING = 'This server does not take mail yet: its operator sets INBOUND_SMTP_PORT (README, Configuration).';
/** How long the button waits for the processed row. */
const WAIT_MS = 10_000;
const perAccount = () => getLimiter('email-test:account', { points: 5, durationSeconds: 600 });

type Member = { accountId: number; role: Role };
type Listener = { host: string; port: number } | null;

/** Sends the test mail and answers when it arrived (UTC `HH:MM:SS`); `listener` is where it goes (none: refused). */
export async function sendTestEmail(by: AuditBy, member: Member, listener: Listener = ownInboundListener()): Promise<{ received_at: string }> {
  requireRole(member, 'email.manage');
  if (getEnv().INBOUND_SMTP_PORT === undefined || !listener) throw new AppError('unavailable', NOT_LISTENING);
  await perAccount().enforce(String(member.accountId), 'test emails');
  const { address } = await inboundAddress(member.accountId);
  const domain = getEnv().INBOUND_MAIL_DOMAIN;
  const sender = `svc-test@${domain}`;
  const messageId = `<svc-test-${randomUUID()}@${domain}>`;
  const db = await getDb();
  await recordAudit(db, member.accountId, by, 'email.test_sent', `test email to ${address}`);
  const transport = nodemailer.createTransport({
    host: listener.host,
    port: listener.port,
    secure: false,
    ignoreTLS: true, // the loopback to ourselves
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: WAIT_MS,
  });
  try {
    await transport.sendMail({
      envelope: { from: sender, to: address },
      from: `svc test <${sender}>`,
      to: address,
      subject: `svc test email ${new Date().toISOString().slice(11, 19)} UTC`,
      text: 'This is a test email sent from the Email page of svc to check that this server receives mail. It starts no conversation and is never answered.',
      messageId,
      headers: { 'Auto-Submitted': 'auto-generated', 'X-Svc-Test': svcTestToken(member.accountId, messageId) },
    });
  } catch (e) {
    const err = e as { responseCode?: number; command?: string; response?: string; message?: string };
    throw new AppError(
      'unavailable',
      err.responseCode
        ? `The listener refused the test email at ${err.command ?? 'SMTP'}: ${err.response}`
        : `The test email did not reach the listener: ${err.message ?? String(e)}`,
    );
  } finally {
    transport.close();
  }
  // The listener's 250 means the row is stored; the processor marks it as the test mail.
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const at = await findTestMailReceived(db, member.accountId, messageId);
    if (at) return { received_at: at };
    if (Date.now() > deadline) throw new AppError('unavailable', 'The listener took the test email but it was not processed within 10 s; see the server log.');
    await new Promise((r) => setTimeout(r, 100));
  }
}
