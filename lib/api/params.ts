import { z } from 'zod';
import { isValidTimestamp, TIMESTAMP_RE } from './timestamps';
import { uuidString } from '../core/validation';
import { MAX_QUERY_CHARS } from '../limits/text';

/** Query-string scalars. The `meta` is what the OpenAPI document shows for the input. */
/** Any integer from 1 (docs/contracts.md §4); kept exact as a bigint, so page 10^20 is just past the last. */
export const pageParam = z
  .string()
  .regex(/^[0-9]{1,100}$/, 'must be an integer of at least 1')
  .transform((s) => BigInt(s))
  .pipe(z.bigint().min(1n, 'must be an integer of at least 1'))
  .meta({ type: 'integer', minimum: 1, description: 'Page number, from 1 (default 1); past the last page: empty results' });

export function intParam(min: number, max: number, description: string) {
  const message = `must be an integer between ${min} and ${max}`;
  return z
    .string()
    .regex(/^[0-9]{1,12}$/, message)
    .transform(Number)
    .pipe(z.number().int().min(min, message).max(max, message))
    .meta({ type: 'integer', minimum: min, maximum: max, description });
}

export const channelIdParam = intParam(1, 2_147_483_647, 'Channel id');

export const uuidParam = (description: string) => uuidString().meta({ type: 'string', format: 'uuid', description });

export const sortParam = z
  .string()
  .transform((s) => s.toUpperCase())
  .pipe(z.enum(['ASC', 'DESC'], { error: 'must be ASC or DESC' }))
  .meta({ type: 'string', enum: ['ASC', 'DESC', 'asc', 'desc'], default: 'DESC', description: 'Sort direction (case-insensitive)' });

export const formatParam = z
  .literal('gridjs', { error: "must be 'gridjs' (or left out)" })
  .meta({ description: 'gridjs: every cell a string or a number, for table UIs' });

export const queryParam = z
  .string()
  .max(MAX_QUERY_CHARS, `must be at most ${MAX_QUERY_CHARS} characters`)
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
  .meta({ description: 'Case-insensitive substring; % and _ are literal' });

/** `status`: a conversation status, matched exactly (svc sets Open, Waiting, Snoozed, Resolved; imports keep theirs). */
export const statusParam = (description: string) =>
  z
    .string()
    .max(100, 'must be at most 100 characters')
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
    .meta({ description, examples: ['Waiting'] });

/** `handled_by`: who answers the conversation. */
export const handledByParam = (description: string) => z.enum(['ai', 'human'], { error: 'must be ai or human' }).meta({ description });
export const declinedParam = z
  .enum(['true', 'false'], { error: 'must be true or false' })
  .meta({ description: 'Only responses the AI declined (true) or answered (false)' });

/**
 * `updated_since` (incremental sync): a UTC time in the API's one format, checked strictly (no
 * ISO 'T', zone, fraction or date-only form; a real calendar time). Kept as the validated text.
 */
export const updatedSinceParam = z
  .string()
  .regex(TIMESTAMP_RE, {
    abort: true,
    message: "must be a UTC time as YYYY-MM-DD HH:MM:SS, e.g. '2026-01-31 14:05:09' (a space, not 'T'; no zone, no fraction)",
  })
  .refine(isValidTimestamp, 'must be a real calendar time: month 01-12, a day that month has, hour 00-23, minute and second 00-59')
  .meta({
    type: 'string',
    examples: ['2026-01-31 14:05:09'],
    description: 'Only records whose updated_at is at or after this UTC time (YYYY-MM-DD HH:MM:SS; the second itself is included)',
  });
