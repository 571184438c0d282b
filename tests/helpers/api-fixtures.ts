/** Shared assertions and data shapes for the Customer API v2 tests (tests/api/customer-api-*.test.ts). */
import assert from 'node:assert/strict';
import type { api, ConversationLine, ResponseLine } from './builders';

export const V2 = '/customer-api/v2';
export type Get = ReturnType<typeof api>;
export type ApiResult = Awaited<ReturnType<Get>>;
export type Direction = 'ASC' | 'DESC';
export type Rec = Record<string, unknown>;

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const TS_RE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** The response record's keys in the record's order (the export's CSV header). */
export const RESPONSE_FIELDS = [
  'response_id',
  'id',
  'question',
  'answer',
  'channel_id',
  'conversation_id',
  'created_at',
  'likes',
  'dislikes',
  'comments',
  'declined',
];
export const RESPONSE_KEYS = [...RESPONSE_FIELDS].sort();
/** The conversation record's keys in the record's order (the export's CSV header). */
export const CONVERSATION_FIELDS = [
  'conversation_id',
  'id',
  'title',
  'status',
  'response_count',
  'channel_id',
  'channel_name',
  'account_id',
  'created_at',
  'updated_at',
  'handled_by',
  'assignee',
  'waiting_since',
  'resolved_at',
  'csat',
];
export const CONVERSATION_KEYS = [...CONVERSATION_FIELDS].sort();
export const MESSAGE_KEYS = ['message_id', 'role', 'author', 'author_name', 'content', 'created_at', 'response_id', 'attachments'].sort();

/** 'YYYY-MM-DD HH:MM:SS' (UTC) for 2026-01-01 09:00:00 plus the given seconds. */
export function ts(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 1, 9, 0, 0) + seconds * 1000).toISOString().replace('T', ' ').slice(0, 19);
}

/** The response record the API must return for an imported line (spec 2.2). */
export function expectedResponse(r: ResponseLine): Rec {
  return {
    response_id: r.response_id,
    id: r.response_id,
    question: r.question,
    answer: r.answer,
    channel_id: r.channel_id,
    conversation_id: r.conversation_id,
    created_at: r.created_at,
    likes: r.likes,
    dislikes: r.dislikes,
    comments: r.comments,
    declined: false,
  };
}

/** The conversation record the API must return (spec 2.3); response_count from the given responses. */
export function expectedConversation(c: ConversationLine, responses: ResponseLine[], accountId: number): Rec {
  return {
    conversation_id: c.conversation_id,
    id: c.conversation_id,
    title: c.title,
    status: c.status,
    response_count: responses.filter((r) => r.conversation_id === c.conversation_id).length,
    channel_id: c.channel_id,
    channel_name: c.channel_name,
    account_id: accountId,
    created_at: c.created_at,
    updated_at: c.updated_at,
    handled_by: 'ai',
    assignee: null,
    waiting_since: null,
    resolved_at: null,
    csat: null,
  };
}

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The total order the API promises (docs/contracts.md §4): by `key`, ties broken by the record id in the
 * same direction. Lower-case UUID text sorts like PostgreSQL's uuid type.
 */
export function totalOrder<T extends Rec>(records: T[], key: string, idKey: string, dir: Direction): T[] {
  const sign = dir === 'ASC' ? 1 : -1;
  return [...records].sort((a, b) => sign * (compareValues(a[key], b[key]) || compareValues(a[idKey], b[idKey])));
}

export function ids(records: unknown): string[] {
  assert.ok(Array.isArray(records), `expected an array, got ${JSON.stringify(records)}`);
  return (records as Rec[]).map((r) => String(r.id));
}

/** RFC 9457 problem details with the given status. */
export function assertProblem(res: ApiResult, status: number): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  assert.equal(typeof res.body?.type, 'string');
  assert.ok(res.body.type.length > 0);
  assert.equal(typeof res.body.title, 'string');
  assert.ok(res.body.title.length > 0);
  assert.equal(res.body.status, status);
  assert.equal(typeof res.body.detail, 'string');
  assert.ok(res.body.detail.length > 0);
}

/** A 400 whose `errors` names `param` exactly as the client spelled it. */
export function assertParamError(res: ApiResult, param: string): void {
  assertProblem(res, 400);
  const errors = res.body.errors as Array<{ param: unknown; message: unknown }>;
  assert.ok(Array.isArray(errors) && errors.length > 0, `errors array expected: ${JSON.stringify(res.body)}`);
  for (const e of errors) {
    assert.equal(typeof e.param, 'string');
    assert.equal(typeof e.message, 'string');
    assert.ok((e.message as string).length > 0);
  }
  assert.deepEqual(
    errors.map((e) => e.param),
    [param],
    `errors should name ${param}: ${JSON.stringify(errors)}`,
  );
}

export function assertUnauthorized(res: ApiResult): void {
  assertProblem(res, 401);
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer\b/);
}

/** A 200 list envelope: exactly count/next/previous/results. */
export function assertEnvelope(res: ApiResult): { count: number; next: string | null; previous: string | null; results: Rec[] } {
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(res.body).sort(), ['count', 'next', 'previous', 'results']);
  assert.ok(Number.isInteger(res.body.count) && res.body.count >= 0);
  assert.ok(Array.isArray(res.body.results));
  for (const link of [res.body.next, res.body.previous]) {
    if (link !== null) {
      assert.equal(typeof link, 'string');
      assert.match(link, /^\/customer-api\/v2\/(response|conversation)\?/);
    }
  }
  return res.body;
}

/** A relative link split into its path and its decoded parameters, in order. */
export function parseLink(link: string): { path: string; params: Array<[string, string]> } {
  const url = new URL(link, 'http://x');
  return { path: url.pathname, params: [...url.searchParams.entries()] };
}

/** Parameters of a link as a sorted list of "name=value" (decoded), for order-free comparison. */
export function linkParamSet(link: string | null): string[] {
  assert.ok(link, 'expected a link');
  return parseLink(link)
    .params.map(([k, v]) => `${k}=${v}`)
    .sort();
}

/** Follows `next` from the first page to the end, checking each page's envelope and `previous`. */
export async function walkPages(get: Get, first: string, maxPages = 500): Promise<{ records: Rec[]; pages: number; counts: number[] }> {
  const records: Rec[] = [];
  const counts: number[] = [];
  let link: string | null = first;
  let pages = 0;
  while (link) {
    pages++;
    assert.ok(pages <= maxPages, 'too many pages');
    const body = assertEnvelope(await get(link));
    counts.push(body.count);
    if (pages === 1) assert.equal(body.previous, null, 'first page has no previous');
    else {
      assert.ok(body.previous, `page ${pages} should have a previous link`);
      assert.equal(new URL(body.previous, 'http://x').searchParams.get('page'), String(pages - 1));
      // From page 2 on, the link followed is the API's own `next`; `previous` differs only in page.
      assert.deepEqual(
        linkParamSet(body.previous).filter((p) => !p.startsWith('page=')),
        linkParamSet(link).filter((p) => !p.startsWith('page=')),
      );
    }
    if (body.next) assert.equal(new URL(body.next, 'http://x').searchParams.get('page'), String(pages + 1));
    records.push(...body.results);
    link = body.next;
  }
  return { records, pages, counts };
}
