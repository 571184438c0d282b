import { z } from 'zod';
import { envelopeSchema, gridjsSchema, listQuerySchema } from '../api/list-query';
import { uuidParam, formatParam } from '../api/params';
import { Timestamp } from '../api/timestamps';
import { RESPONSE_SORT_COLUMNS, sortKeysOf } from '../../db/queries/sort-keys';

export const RESPONSE_SORT_KEYS = sortKeysOf(RESPONSE_SORT_COLUMNS);

export const ResponseRecord = z
  .object({
    response_id: z.guid(),
    id: z.guid().meta({ description: 'Alias of response_id' }),
    question: z.string(),
    answer: z.string(),
    channel_id: z.int(),
    conversation_id: z.guid(),
    created_at: Timestamp,
    likes: z.int().min(0),
    dislikes: z.int().min(0),
    comments: z.int().min(0),
    declined: z.boolean().meta({ description: 'The AI declined to answer (docs/contracts.md §15 "declined")' }),
  })
  .meta({ id: 'Response' });
export type ResponseRecord = z.infer<typeof ResponseRecord>;

/** The documented example record (type-checked against the schema it illustrates). */
export const RESPONSE_EXAMPLE: ResponseRecord = {
  response_id: '7d9f4b1e-3c2a-4e5b-9a61-2f0c8d4e6b13',
  id: '7d9f4b1e-3c2a-4e5b-9a61-2f0c8d4e6b13',
  question: 'How do I reset my password?',
  answer: 'Open **Account → Security** and choose "Reset password"; the link is valid for 24 hours.',
  channel_id: 7,
  conversation_id: '0b6f5f0e-6a1e-4a0e-9d7e-0a1d2c3b4a59',
  created_at: '2026-01-05 10:01:12',
  likes: 1,
  dislikes: 0,
  comments: 0,
  declined: false,
};

/** Comments stored per answer: the widget's next one is refused (`limit_reached`), and every reader lists at most these. */
export const COMMENTS_PER_RESPONSE = 20;

export const ResponseComment = z.object({ text: z.string(), created_at: Timestamp }).meta({ id: 'ResponseComment' });

/** One response as `GET /response/{id}` gives it: the record and its comments' texts, oldest first (at most COMMENTS_PER_RESPONSE). */
export const ResponseDetail = ResponseRecord.extend({ comment_list: z.array(ResponseComment).max(COMMENTS_PER_RESPONSE) }).meta({ id: 'ResponseDetail' });
export type ResponseDetail = z.infer<typeof ResponseDetail>;

export const RESPONSE_DETAIL_EXAMPLE: ResponseDetail = {
  ...RESPONSE_EXAMPLE,
  comments: 1,
  comment_list: [{ text: 'The link expired before I could use it.', created_at: '2026-01-05 10:03:40' }],
};

export const ResponseListQuery = listQuerySchema(RESPONSE_SORT_KEYS, true);
export const ResponseIdPath = z.object({ response_id: uuidParam('Response id') });
export const SingleRecordQuery = z.object({ format: formatParam.optional() });

/** The 200 bodies: the record (or page), or its format=gridjs form. */
export const ResponseCells = gridjsSchema(ResponseRecord, 'ResponseCells');
export const ResponseBody = ResponseDetail.or(ResponseCells);
export const ResponsePage = envelopeSchema(ResponseRecord, 'ResponsePage').or(envelopeSchema(ResponseCells, 'ResponseCellsPage'));
