import { z } from 'zod';
import { isValidTimestamp } from '../api/timestamps';

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const Uuid = z.string({ error: 'must be a UUID string' }).regex(UUID_RE, 'must be a UUID').transform((s) => s.toLowerCase());
const Text = (max: number) => z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`)
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');
const Count = z.int({ error: 'must be an integer' }).min(0, 'must not be negative').max(2_147_483_647, 'is too large');
const ChannelId = z.int({ error: 'must be an integer' }).min(1, 'must be a positive integer').max(2_147_483_647, 'is too large');
const Ts = z.string({ error: 'must be a string YYYY-MM-DD HH:MM:SS (UTC)' })
  .refine(isValidTimestamp, 'must be a UTC time YYYY-MM-DD HH:MM:SS')
  .transform((s) => `${s}+00`);

/** One NDJSON line of an import file (CONTRACTS §3). Unknown fields, like response_count, are ignored. */
export const ImportConversationLine = z.object({
  type: z.literal('conversation'),
  conversation_id: Uuid,
  title: Text(2000),
  status: Text(50).pipe(z.string().min(1, 'must not be empty')),
  channel_id: ChannelId,
  channel_name: Text(200).pipe(z.string().min(1, 'must not be empty')),
  created_at: Ts,
  updated_at: Ts,
});

export const ImportResponseLine = z.object({
  type: z.literal('response'),
  response_id: Uuid,
  conversation_id: Uuid,
  question: Text(100_000),
  answer: Text(100_000),
  channel_id: ChannelId,
  created_at: Ts,
  likes: Count,
  dislikes: Count,
  comments: Count,
});
