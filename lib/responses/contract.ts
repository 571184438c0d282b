import { z } from 'zod';
import { listQuerySchema } from '../api/list-query';
import { uuidParam, formatParam } from '../api/params';
import { Timestamp } from '../api/timestamps';

export const RESPONSE_SORT_KEYS = [
  'created_at', 'response_id', 'id', 'channel_id', 'conversation_id', 'likes', 'dislikes', 'comments',
] as const;

export const ResponseRecord = z.object({
  response_id: z.uuid(),
  id: z.uuid().meta({ description: 'Alias of response_id' }),
  question: z.string(),
  answer: z.string(),
  channel_id: z.int(),
  conversation_id: z.uuid(),
  created_at: Timestamp,
  likes: z.int().min(0),
  dislikes: z.int().min(0),
  comments: z.int().min(0),
}).meta({ id: 'Response' });
export type ResponseRecord = z.infer<typeof ResponseRecord>;

export const ResponseListQuery = listQuerySchema(RESPONSE_SORT_KEYS, true);
export const ResponseIdPath = z.object({ response_id: uuidParam('Response id') });
export const SingleRecordQuery = z.object({ format: formatParam.optional() });
