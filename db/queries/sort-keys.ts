/**
 * The lists' sort keys (the API's `order_by`) and the column each orders by; ties are broken by id
 * (shared.ts totalOrder). No imports: the contracts derive their `order_by` enums from these.
 */
export const RESPONSE_SORT_COLUMNS = {
  created_at: 'created_at',
  response_id: 'id',
  id: 'id',
  channel_id: 'channel_id',
  conversation_id: 'conversation_id',
  likes: 'likes',
  dislikes: 'dislikes',
  comments: 'comments',
} as const;
export type ResponseSortKey = keyof typeof RESPONSE_SORT_COLUMNS;

export const CONVERSATION_SORT_COLUMNS = {
  created_at: 'created_at',
  conversation_id: 'id',
  id: 'id',
  channel_id: 'channel_id',
  updated_at: 'updated_at',
  response_count: 'response_count',
} as const;
export type ConversationSortKey = keyof typeof CONVERSATION_SORT_COLUMNS;

/** A map's keys in their written order, as the non-empty tuple z.enum takes. */
export const sortKeysOf = <K extends string>(columns: Record<K, string>) => Object.keys(columns) as [K, ...K[]];
