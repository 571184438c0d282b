import { z } from 'zod';
import { ConversationDetail, ConversationIdPath, ConversationListQuery, ConversationRecord } from '../conversations/contract';
import { ResponseIdPath, ResponseListQuery, ResponseRecord, SingleRecordQuery } from '../responses/contract';

const Problem = z.object({
  type: z.string(), title: z.string(), status: z.int(), detail: z.string(),
  errors: z.array(z.object({ param: z.string(), message: z.string() })).optional()
    .meta({ description: 'For 400: one entry per invalid parameter' }),
  request_id: z.string().optional(),
}).meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)' });

const listOf = (item: z.ZodType, id: string) => z.object({
  count: z.int().min(0).meta({ description: 'Total number of matching records' }),
  next: z.string().nullable().meta({ description: 'Relative link to the next page, or null' }),
  previous: z.string().nullable().meta({ description: 'Relative link to the previous page, or null' }),
  results: z.array(item),
}).meta({ id });

const ResponseList = listOf(ResponseRecord, 'ResponseList');
const ConversationList = listOf(ConversationRecord, 'ConversationList');
const SCHEMAS = { Problem, ResponseList, ConversationList, ConversationDetail, ResponseRecord };

type JsonSchema = Record<string, unknown>;

function inputSchema(field: z.ZodType): JsonSchema {
  const { $schema: _ignored, pattern: _pattern, ...rest } = z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function parameters(schema: z.ZodObject, where: 'query' | 'path') {
  return Object.entries(schema.shape).map(([name, field]) => {
    const s = inputSchema(field as z.ZodType);
    const { description, ...rest } = s;
    return {
      name, in: where, required: where === 'path', description,
      schema: rest,
      ...(rest.type === 'array' ? { style: 'form', explode: true } : {}),
    };
  });
}

const problem = (description: string) => ({
  description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

function operation(summary: string, params: unknown[], okRef: string, extra: Record<string, unknown> = {}) {
  return {
    summary,
    security: [{ apiKey: [] }],
    parameters: params,
    responses: {
      200: { description: 'OK', content: { 'application/json': { schema: { $ref: `#/components/schemas/${okRef}` } } } },
      400: problem('Invalid parameter(s); `errors` lists each'),
      401: problem('Missing, malformed, unknown, revoked or other-environment API key'),
      405: problem('Any method other than GET or HEAD'),
      503: problem('Database unreachable; retry after Retry-After seconds'),
      ...extra,
    },
  };
}

let cached: unknown;

/** The OpenAPI 3.1 document, derived from the same zod schemas that validate and shape the API. */
export function openApiDocument(): unknown {
  if (cached) return cached;
  const registry = z.registry<{ id: string }>();
  for (const [id, s] of Object.entries(SCHEMAS)) registry.add(s, { id: id === 'ResponseRecord' ? 'Response' : id });
  const { schemas } = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any' }) as { schemas: Record<string, JsonSchema> };
  for (const s of Object.values(schemas)) delete s.$schema;
  const notFound = { 404: problem('Unknown id, malformed id, or an id of another account') };
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'svc Customer API', version: '2.0.0',
      description: 'Read-only access to an account\'s AI answer records and conversations. Timestamps are UTC, `YYYY-MM-DD HH:MM:SS`.',
    },
    servers: [{ url: '/customer-api/v2' }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'svc_<live|test>_<key id>_<secret>' } },
      schemas,
    },
    paths: {
      '/response': { get: operation('List responses', parameters(ResponseListQuery, 'query'), 'ResponseList') },
      '/response/{response_id}': {
        get: operation('Get one response', [...parameters(ResponseIdPath, 'path'), ...parameters(SingleRecordQuery, 'query')], 'Response', notFound),
      },
      '/conversation': { get: operation('List conversations', parameters(ConversationListQuery, 'query'), 'ConversationList') },
      '/conversation/{conversation_id}': {
        get: operation('Get one conversation with its messages',
          [...parameters(ConversationIdPath, 'path'), ...parameters(SingleRecordQuery, 'query')], 'ConversationDetail', notFound),
      },
    },
  };
  return cached;
}
