import { onReadDb, type ReadTarget } from '../../db/read';
import { getDb, openDb } from '../../db/client';
import { getResponseById, listResponseComments, listResponsesWithCount, type ResponseFilter, type ResponseRow } from '../../db/queries/responses';
import { AppError } from '../core/errors';
import { gridjsCells, pageWindowOf, parseListQuery, parseSingleQuery, recordsEnvelope, type Envelope, type ListQuery } from '../api/list-query';
import { COMMENTS_PER_RESPONSE, ResponseListQuery, type RESPONSE_SORT_KEYS, type ResponseDetail, type ResponseRecord } from './contract';

type SortKey = (typeof RESPONSE_SORT_KEYS)[number];

export function toResponseRecord(r: ResponseRow): ResponseRecord {
  return {
    response_id: r.id,
    id: r.id,
    question: r.question,
    answer: r.answer,
    channel_id: r.channel_id,
    conversation_id: r.conversation_id,
    created_at: r.created_at,
    likes: r.likes,
    dislikes: r.dislikes,
    comments: r.comments,
    declined: r.declined,
  };
}

/** The filter of a parsed list (or export) query: one mapping for both. */
export function responseFilterOf(q: ListQuery<string>, channelIds: number[]): ResponseFilter {
  return {
    channelIds,
    conversationId: q.conversation_id,
    query: q.query,
    updatedSince: q.updated_since,
    status: q.status,
    handledBy: q.handled_by,
    declined: q.declined === undefined ? undefined : q.declined === 'true',
  };
}

/** GET /response for one account: validated parameters in, the page envelope (links to `linkPath`) out. */
export async function listResponsesPage(accountId: number, params: URLSearchParams, linkPath: string, target: ReadTarget): Promise<Envelope<unknown>> {
  const { query: q, channelIds } = parseListQuery<SortKey>(params, ResponseListQuery);
  const { count, rows } = await onReadDb(target, (db) =>
    listResponsesWithCount(db, accountId, responseFilterOf(q, channelIds), q.order_by ?? 'created_at', pageWindowOf(q)),
  );
  return recordsEnvelope(linkPath, q, count, rows.map(toResponseRecord));
}

/** One response; its JSON form adds `comment_list` (the gridjs form stays one table row). */
export async function getResponse(accountId: number, responseId: string, params: URLSearchParams) {
  const { format } = parseSingleQuery(params);
  const db = openDb() ?? (await getDb());
  const row = await getResponseById(db, accountId, responseId);
  if (!row) throw new AppError('not_found', `No response with id ${responseId}.`);
  const record = toResponseRecord(row);
  if (format === 'gridjs') return gridjsCells(record);
  return { ...record, comment_list: await listResponseComments(db, accountId, responseId, COMMENTS_PER_RESPONSE) } satisfies ResponseDetail;
}
