import { getDb } from '../../db/client';
import { getInboundMailRaw, listConversationMails, type ConversationMailRow } from '../../db/queries/inbound-mail';
import { AppError } from '../core/errors';
import { isUuid } from '../core/validation';

/** "Show original" (docs/contracts.md §17): the raw mail svc received stays readable from the transcript. */
const LISTED = 100;

/** The mail of a conversation of the account (none for a widget conversation). */
export async function conversationMails(accountId: number, conversationId: string): Promise<ConversationMailRow[]> {
  return listConversationMails(await getDb(), accountId, conversationId, LISTED);
}

/** One received mail as it arrived, as plain text (never rendered: it may hold HTML and scripts). */
export async function originalMail(accountId: number, conversationId: string, id: string): Promise<Response> {
  const n = /^\d{1,15}$/.test(id) ? Number(id) : Number.NaN;
  const raw = Number.isSafeInteger(n) && isUuid(conversationId) ? await getInboundMailRaw(await getDb(), accountId, conversationId.toLowerCase(), n) : null;
  if (!raw) throw new AppError('not_found', `No mail with id ${id.slice(0, 40)}.`);
  return new Response(new Uint8Array(raw), {
    status: 200,
    headers: {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Disposition': 'inline',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'",
      'Cache-Control': 'private, no-store',
    },
  });
}
