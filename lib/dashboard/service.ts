import { getDb, type Db } from '../../db/client';
import { getAccountById } from '../../db/queries/accounts';
import { listApiKeys } from '../../db/queries/api-keys';
import { listChannels } from '../../db/queries/channels';
import { getConversationById } from '../../db/queries/conversations';
import {
  getAccountTotals,
  getBusiestChannels,
  getResponseDaySpan,
  getResponsesPerBucket,
  countTranscriptUnits,
  listCommentsOfResponses,
  listTranscriptEntries,
  listTranscriptKeys,
  transcriptPositionOf,
  type TranscriptKey,
} from '../../db/queries/overview';
import { listConversationAttachments } from '../../db/queries/responses';
import { parseOverviewRange } from './overview-range';
import { toConversationRecord } from '../conversations/service';
import { messagesOf } from '../conversations/messages';
import { listConversationMessages } from '../../db/queries/handoff';
import { isUuid } from '../core/validation';
import { COMMENTS_PER_RESPONSE } from '../responses/contract';
import { choosePage, decodeEarlier, encodeEarlier, INBOX_PAGE_SIZE, responseAsked, TRANSCRIPT_PAGE_SIZE } from './transcript-pages';

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

type Conversation = NonNullable<Awaited<ReturnType<typeof getConversationById>>>;

async function conversationOf(accountId: number, conversationId: string): Promise<{ db: Db; conversation: Conversation } | null> {
  if (!isUuid(conversationId)) return null;
  const db = await getDb();
  const conversation = await getConversationById(db, accountId, conversationId.toLowerCase());
  return conversation ? { db, conversation } : null;
}

/**
 * The messages of a page of units (the one builder's, notes included), each answer with its
 * comments' texts (at most COMMENTS_PER_RESPONSE, matched by a Map) and its declined flag. Reads
 * only the page's rows.
 */
async function messagesOfUnits(db: Db, accountId: number, conversationId: string, keys: TranscriptKey[]) {
  const responseIds = keys.filter((k) => k.rank === 0).map((k) => k.id);
  const storedIds = keys.filter((k) => k.rank === 1).map((k) => k.id);
  const [entries, stored, comments] = await Promise.all([
    responseIds.length ? listTranscriptEntries(db, accountId, conversationId, responseIds) : [],
    storedIds.length ? listConversationMessages(db, accountId, conversationId, { withNotes: true, ids: storedIds }) : [],
    listCommentsOfResponses(db, accountId, responseIds, COMMENTS_PER_RESPONSE),
  ]);
  const messageIds = [...entries.flatMap((e) => [e.question_message_id, e.answer_message_id]), ...storedIds];
  const attachments = messageIds.length ? await listConversationAttachments(db, accountId, conversationId, messageIds) : [];
  const byResponse = new Map<string, typeof comments>();
  for (const c of comments) {
    const list = byResponse.get(c.response_id);
    if (list) list.push(c);
    else byResponse.set(c.response_id, [c]);
  }
  const declined = new Set(entries.filter((e) => e.declined).map((e) => e.id));
  return messagesOf(entries, attachments, stored).map((m) => ({
    ...m,
    commentTexts: m.author === 'ai' ? (byResponse.get(m.response_id ?? '') ?? []) : [],
    declined: m.author === 'ai' && declined.has(m.response_id ?? ''),
  }));
}

/**
 * A page of a conversation's transcript for /conversations/<id> (lib/dashboard/transcript-pages.ts):
 * the newest page, the asked `page`, or the one holding `response`; null when not this account's.
 */
export async function getTranscript(accountId: number, conversationId: string, query: { page?: string | string[]; response?: string | string[] } = {}) {
  const found = await conversationOf(accountId, conversationId);
  if (!found) return null;
  const { db, conversation } = found;
  const asked = responseAsked(query);
  const [total, holding] = await Promise.all([
    countTranscriptUnits(db, accountId, conversation.id, true),
    asked && isUuid(asked) ? transcriptPositionOf(db, accountId, conversation.id, asked.toLowerCase(), true) : null,
  ]);
  const choice = choosePage(total, query, holding);
  const keys = await listTranscriptKeys(db, accountId, conversation.id, true, { offset: choice.first, limit: TRANSCRIPT_PAGE_SIZE });
  const messages = await messagesOfUnits(db, accountId, conversation.id, keys);
  return { conversation: toConversationRecord(conversation), messages, page: { ...choice, total, units: keys.length } };
}

/**
 * The newest INBOX_PAGE_SIZE units of a conversation before `before` (a cursor "Load earlier"
 * gave; none: the newest), oldest first, and the cursor of the ones before them (null: none).
 */
export async function getLatestMessages(accountId: number, conversationId: string, before: string | null = null) {
  const found = await conversationOf(accountId, conversationId);
  if (!found) return null;
  const { db, conversation } = found;
  const keys = await listTranscriptKeys(db, accountId, conversation.id, true, {
    before: before === null ? null : decodeEarlier(before),
    limit: INBOX_PAGE_SIZE + 1,
  });
  const more = keys.length > INBOX_PAGE_SIZE;
  const shown = more ? keys.slice(1) : keys;
  const messages = await messagesOfUnits(db, accountId, conversation.id, shown);
  return { conversation: toConversationRecord(conversation), messages, earlier: more ? encodeEarlier(shown[0]!) : null };
}
