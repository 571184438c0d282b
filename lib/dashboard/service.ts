import { getDb } from '../../db/client';
import { getAccountById } from '../../db/queries/accounts';
import { listApiKeys } from '../../db/queries/api-keys';
import { listChannels } from '../../db/queries/channels';
import { getConversationById } from '../../db/queries/conversations';
import {
  getAccountTotals,
  getBusiestChannels,
  getResponseDaySpan,
  getResponsesPerBucket,
  listCommentsOfConversation,
  listTranscriptEntries,
} from '../../db/queries/overview';
import { listConversationAttachments } from '../../db/queries/responses';
import { parseOverviewRange } from './overview-range';
import { toConversationRecord } from '../conversations/service';
import { messagesOf } from '../conversations/messages';
import { listConversationMessages } from '../../db/queries/handoff';
import { isUuid } from '../core/validation';

/**
 * What the dashboard reads, always for the signed-in admin's account. The overview's chart range
 * comes from the page's URL parameters (lib/dashboard/overview-range.ts); days are UTC.
 */
/** The account's name for the dashboard's header. */
export async function getAccountName(accountId: number): Promise<string> {
  return (await getAccountById(await getDb(), accountId))?.name ?? '';
}

export async function getOverview(accountId: number, rangeParams: Record<string, string | string[] | undefined> = {}) {
  const db = await getDb();
  const [totals, span, channels] = await Promise.all([
    getAccountTotals(db, accountId),
    getResponseDaySpan(db, accountId),
    getBusiestChannels(db, accountId, 5),
  ]);
  const range = parseOverviewRange(rangeParams, new Date().toISOString().slice(0, 10), span);
  const perBucket = await getResponsesPerBucket(db, accountId, range);
  return { totals, span, range, perBucket, channels };
}

export async function getChannels(accountId: number) {
  return listChannels(await getDb(), accountId);
}

export async function getApiKeys(accountId: number) {
  return listApiKeys(await getDb(), accountId);
}

/** A conversation's record and its messages (the one builder's), each answer with its comments' texts. */
export async function getTranscript(accountId: number, conversationId: string) {
  if (!isUuid(conversationId)) return null;
  const db = await getDb();
  const conversation = await getConversationById(db, accountId, conversationId.toLowerCase());
  if (!conversation) return null;
  const [entries, attachments, comments, stored] = await Promise.all([
    listTranscriptEntries(db, accountId, conversation.id),
    listConversationAttachments(db, accountId, conversation.id),
    listCommentsOfConversation(db, accountId, conversation.id),
    listConversationMessages(db, accountId, conversation.id, { withNotes: true }),
  ]);
  const declined = new Set(entries.filter((e) => e.declined).map((e) => e.id));
  const messages = messagesOf(entries, attachments, stored).map((m) => ({
    ...m,
    commentTexts: m.author === 'ai' ? comments.filter((c) => c.response_id === m.response_id) : [],
    declined: m.author === 'ai' && declined.has(m.response_id ?? ''),
  }));
  return { conversation: toConversationRecord(conversation), messages };
}
