import { z } from 'zod';
import { ConversationDetail, ConversationListQuery, ConversationRecord } from '../conversations/contract';
import { ResponseListQuery, ResponseRecord } from '../responses/contract';

/** Export formats (docs/contracts.md §10): NDJSON by default, or CSV. */
export const exportFormatParam = z
  .enum(['ndjson', 'csv'], { error: "must be 'ndjson' or 'csv' (or left out)" })
  .meta({ description: 'ndjson (default): one JSON record per line; csv: RFC 4180 with a header row' });

const NOT_PAGED = { page: true, resultsPerPage: true, format: true } as const;

/** Every list parameter except page, resultsPerPage/pageSize and format=gridjs; plus the export format. */
export const ResponseExportQuery = ResponseListQuery.omit(NOT_PAGED).extend({ format: exportFormatParam.optional() });

export const ConversationExportQuery = ConversationListQuery.omit(NOT_PAGED).extend({
  format: exportFormatParam.optional(),
  include: z
    .literal('messages', { error: "must be 'messages' (or left out)" })
    .meta({ description: 'messages: each conversation with its messages, as GET /conversation/{id} (NDJSON only)' })
    .optional(),
});

/** One NDJSON line of each export (the OpenAPI document's item schemas). */
export const ResponseExportLine = ResponseRecord;
export const ConversationExportLine = ConversationRecord.or(ConversationDetail);

/** CSV header rows: the record's fields in the order of the seed's tables (the record schemas' order). */
export const RESPONSE_CSV_COLUMNS = Object.keys(ResponseRecord.shape);
export const CONVERSATION_CSV_COLUMNS = Object.keys(ConversationRecord.shape);
