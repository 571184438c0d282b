import { getDb } from '../../db/client';
import { insertInboundMail } from '../../db/queries/inbound-mail';
import { inboundAddress } from '../email/address';
import { handleEmailAnswers } from '../email/answers';
import { processInboundMail } from '../email/processor';

/** Two customers' mails: one the AI answers from the FAQ by mail, one that asks for a person and waits in the inbox. */
const MAILS = [
  {
    from: 'Maria Lopez <maria.lopez@example.com>',
    id: '<demo-payment-1@mail.example.com>',
    subject: 'Paying by invoice',
    text: 'Hi,\r\n\r\nwhich payment methods do you accept?\r\n\r\nThanks,\r\nMaria\r\n\r\n-- \r\nMaria Lopez\r\nSent from my phone\r\n',
  },
  {
    from: 'Tom Becker <tom.becker@example.org>',
    id: '<demo-invoice-1@mail.example.org>',
    subject: 'Invoice for March',
    text: 'Hello,\r\n\r\nI need to speak to a person about our invoice for March, please.\r\n\r\nTom Becker\r\n',
  },
];

/**
 * The demo's email channel (docs/contracts.md §17): the account's inbound address and two mails
 * received through the same store and processing as the SMTP listener's, so the inbox shows the
 * Email badge, the AI's answer is in the outbox (`mail list`) and "Show original" has the raw mail.
 */
export async function seedEmailDemo(accountId: number, now = new Date()): Promise<{ address: string }> {
  const { address } = await inboundAddress(accountId);
  const local = address.slice(0, address.indexOf('@'));
  const db = await getDb();
  for (const [i, m] of MAILS.entries()) {
    const raw = [
      `From: ${m.from}`,
      `To: Demo Company Support <${address}>`,
      `Subject: ${m.subject}`,
      `Date: ${new Date(now.getTime() - (MAILS.length - i) * 3_600_000).toUTCString()}`,
      `Message-ID: ${m.id}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      m.text,
    ].join('\r\n');
    await insertInboundMail(db, accountId, { envelopeFrom: /<([^>]+)>/.exec(m.from)![1]!, recipient: local, raw: Buffer.from(raw) });
  }
  while (await processInboundMail());
  await handleEmailAnswers();
  return { address };
}
