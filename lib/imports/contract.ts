import { z } from 'zod';
import { isValidTimestamp } from '../api/timestamps';
import { isUuid, UUID_PATTERN } from '../core/validation';
import { describeIssues, issueParams } from '../zod-issues';

/** The limits of an import line's fields: the zod schemas below and their fast path read them here. */
export const IMPORT_LIMITS = {
  title: 2000,
  status: 50,
  channelName: 200,
  text: 100_000,
  int: 2_147_483_647,
} as const;

/** Text PostgreSQL can store: no NUL, and valid Unicode (no UTF-16 surrogate outside a pair). */
const hasNoNul = (s: string) => !s.includes('\u0000');
const isWellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();

const Uuid = z
  .string({ error: 'must be a UUID string' })
  .regex(UUID_PATTERN, 'must be a UUID')
  .transform((s) => s.toLowerCase());
const Text = (max: number) =>
  z
    .string({ error: 'must be a string' })
    .max(max, `must be at most ${max} characters`)
    .refine(hasNoNul, 'must not contain NUL characters')
    .refine(isWellFormed, 'must be valid Unicode (no unpaired surrogate)');
const Count = z.int({ error: 'must be an integer' }).min(0, 'must not be negative').max(IMPORT_LIMITS.int, 'is too large');
const ChannelId = z.int({ error: 'must be an integer' }).min(1, 'must be a positive integer').max(IMPORT_LIMITS.int, 'is too large');
const Ts = z
  .string({ error: 'must be a string YYYY-MM-DD HH:MM:SS (UTC)' })
  .refine(isValidTimestamp, 'must be a UTC time YYYY-MM-DD HH:MM:SS')
  .transform((s) => `${s}+00`);

/** One NDJSON line of an import file (docs/contracts.md §3). Unknown fields, like response_count, are ignored. */
export const ImportConversationLine = z.object({
  type: z.literal('conversation'),
  conversation_id: Uuid,
  title: Text(IMPORT_LIMITS.title),
  status: Text(IMPORT_LIMITS.status).pipe(z.string().min(1, 'must not be empty')),
  channel_id: ChannelId,
  channel_name: Text(IMPORT_LIMITS.channelName).pipe(z.string().min(1, 'must not be empty')),
  created_at: Ts,
  updated_at: Ts,
  // The handoff fields (docs/contracts.md §14), optional; a given null clears the stored value.
  handled_by: z.enum(['ai', 'human'], { error: 'must be ai or human' }).optional(),
  assignee: z.email({ error: "must be a member's email address" }).max(320).nullable().optional(),
  waiting_since: Ts.nullable().optional(),
  resolved_at: Ts.nullable().optional(),
  csat: z.int({ error: 'must be an integer 1 to 5' }).min(1, 'must be 1 to 5').max(5, 'must be 1 to 5').nullable().optional(),
});

/** The handoff fields of an import line; a line with any of them goes through zod (the fast path leaves them out). */
export const IMPORT_HANDOFF_FIELDS = ['handled_by', 'assignee', 'waiting_since', 'resolved_at', 'csat'] as const;

export const ImportResponseLine = z.object({
  type: z.literal('response'),
  response_id: Uuid,
  conversation_id: Uuid,
  question: Text(IMPORT_LIMITS.text),
  answer: Text(IMPORT_LIMITS.text),
  channel_id: ChannelId,
  created_at: Ts,
  likes: Count,
  dislikes: Count,
  comments: Count,
});

export type ImportConversation = z.output<typeof ImportConversationLine>;
export type ImportResponse = z.output<typeof ImportResponseLine>;

// The fast path: the import checks ~1M lines, and zod's per-field machinery is the largest cost
// after JSON.parse. These predicates accept only what the schemas above accept and build the same
// output (tests/unit/import-contract.test.ts checks both with fast-check); whatever they do not
// accept goes through zod, so every message still comes from the schemas.
const isText = (v: unknown, max: number, min = 0): v is string => typeof v === 'string' && v.length <= max && v.length >= min && hasNoNul(v) && isWellFormed(v);
const isInt = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= IMPORT_LIMITS.int;
const isTs = (v: unknown): v is string => typeof v === 'string' && isValidTimestamp(v);

function fastConversation(o: Record<string, unknown>): ImportConversation | null {
  const { conversation_id: id, title, status, channel_id: ch, channel_name: name, created_at: c, updated_at: u } = o;
  if (IMPORT_HANDOFF_FIELDS.some((f) => o[f] !== undefined)) return null;
  if (
    !isUuid(id) ||
    !isText(title, IMPORT_LIMITS.title) ||
    !isText(status, IMPORT_LIMITS.status, 1) ||
    !isInt(ch, 1) ||
    !isText(name, IMPORT_LIMITS.channelName, 1) ||
    !isTs(c) ||
    !isTs(u)
  )
    return null;
  return {
    type: 'conversation',
    conversation_id: id.toLowerCase(),
    title,
    status,
    channel_id: ch,
    channel_name: name,
    created_at: `${c}+00`,
    updated_at: `${u}+00`,
  };
}

function fastResponse(o: Record<string, unknown>): ImportResponse | null {
  const { response_id: id, conversation_id: conv, question: q, answer: a, channel_id: ch, created_at: c, likes, dislikes, comments } = o;
  if (
    !isUuid(id) ||
    !isUuid(conv) ||
    !isText(q, IMPORT_LIMITS.text) ||
    !isText(a, IMPORT_LIMITS.text) ||
    !isInt(ch, 1) ||
    !isTs(c) ||
    !isInt(likes, 0) ||
    !isInt(dislikes, 0) ||
    !isInt(comments, 0)
  )
    return null;
  return {
    type: 'response',
    response_id: id.toLowerCase(),
    conversation_id: conv.toLowerCase(),
    question: q,
    answer: a,
    channel_id: ch,
    created_at: `${c}+00`,
    likes,
    dislikes,
    comments,
  };
}

const issuesOf = (error: z.ZodError) => describeIssues(issueParams(error, { path: 'full', fallback: '' }), ', ');

export type ParsedImportLine = { ok: true; value: ImportConversation | ImportResponse } | { ok: false; problem: string };

/** Checks one parsed JSON line against the schemas; the problem text is what the rejection shows. */
export function parseImportLine(value: unknown): ParsedImportLine {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (type === 'conversation') {
    const fast = fastConversation(value as Record<string, unknown>);
    if (fast) return { ok: true, value: fast };
    const r = ImportConversationLine.safeParse(value);
    return r.success ? { ok: true, value: r.data } : { ok: false, problem: `conversation: ${issuesOf(r.error)}` };
  }
  if (type === 'response') {
    const fast = fastResponse(value as Record<string, unknown>);
    if (fast) return { ok: true, value: fast };
    const r = ImportResponseLine.safeParse(value);
    return r.success ? { ok: true, value: r.data } : { ok: false, problem: `response: ${issuesOf(r.error)}` };
  }
  return { ok: false, problem: 'type must be "conversation" or "response"' };
}
