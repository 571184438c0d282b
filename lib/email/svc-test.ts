import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ReadMail } from '../documents/mail';
import { nextAuthSecret } from '../env';

/**
 * svc's own test mail (/email "Send a test email", docs/decisions/email.md): its `X-Svc-Test`
 * header is a MAC of the account and the Message-ID under the server's secret, so a stranger who
 * copies the header cannot make a real mail vanish from the inbox.
 */
export function svcTestToken(accountId: number, messageId: string): string {
  return createHmac('sha256', nextAuthSecret() ?? '')
    .update(`svc-test:${accountId}:${messageId}`)
    .digest('base64url');
}

/** Whether a received mail is svc's own test mail for this account. */
export function isSvcTestMail(accountId: number, mail: ReadMail): mail is ReadMail & { messageId: string; svcTest: string } {
  if (!mail.svcTest || !mail.messageId || !nextAuthSecret()) return false;
  const want = Buffer.from(svcTestToken(accountId, mail.messageId));
  const got = Buffer.from(mail.svcTest);
  return got.length === want.length && timingSafeEqual(got, want);
}
