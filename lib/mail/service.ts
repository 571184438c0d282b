import { z } from 'zod';
import { getDb } from '../../db/client';
import { listMails as listMailRows } from '../../db/queries/mails';
import { Email } from '../accounts/contract';
import { validate } from '../accounts/service';

const ListMailsInput = z.object({ to: Email.optional(), limit: z.number().int().min(1).max(1000).default(100) });

/** The outbox, newest first (CLI `mail list`, docs/contracts.md §13). */
export async function listMails(input: z.input<typeof ListMailsInput>) {
  const v = validate(ListMailsInput, input);
  const mails = await listMailRows(await getDb(), v);
  return {
    mails: mails.map((m) => ({
      to: m.to,
      subject: m.subject,
      text: m.text,
      created_at: m.createdAt.toISOString(),
      sent_at: m.sentAt?.toISOString() ?? null,
      status: m.status,
      attempts: m.attempts,
      last_error: m.lastError,
    })),
  };
}
