import { z } from 'zod';

/** Query-string scalars. The `meta` is what the OpenAPI document shows for the input. */
/** Any integer from 1 (CONTRACTS §4); kept exact as a bigint, so page 10^20 is just past the last. */
export const pageParam = z.string()
  .regex(/^[0-9]{1,100}$/, 'must be an integer of at least 1')
  .transform((s) => BigInt(s))
  .pipe(z.bigint().min(1n, 'must be an integer of at least 1'))
  .meta({ type: 'integer', minimum: 1, description: 'Page number, from 1 (default 1); past the last page: empty results' });

export function intParam(min: number, max: number, description: string) {
  const message = `must be an integer between ${min} and ${max}`;
  return z.string()
    .regex(/^[0-9]{1,12}$/, message)
    .transform(Number)
    .pipe(z.number().int().min(min, message).max(max, message))
    .meta({ type: 'integer', minimum: min, maximum: max, description });
}

export const channelIdParam = intParam(1, 2_147_483_647, 'Channel id');

export const uuidParam = (description: string) =>
  z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID')
    .transform((s) => s.toLowerCase())
    .meta({ type: 'string', format: 'uuid', description });

export const sortParam = z.string()
  .transform((s) => s.toUpperCase())
  .pipe(z.enum(['ASC', 'DESC'], { error: 'must be ASC or DESC' }))
  .meta({ type: 'string', enum: ['ASC', 'DESC', 'asc', 'desc'], default: 'DESC', description: 'Sort direction (case-insensitive)' });

export const formatParam = z.literal('gridjs', { error: "must be 'gridjs' (or left out)" })
  .meta({ description: 'gridjs: every cell a string or a number, for table UIs' });

export const queryParam = z.string().max(200, 'must be at most 200 characters')
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters')
  .meta({ description: 'Case-insensitive substring; % and _ are literal' });
