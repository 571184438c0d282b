import { z } from 'zod';
import { ALIASES } from '../api/list-query';
import { API_BASE, CUSTOMER_OPERATIONS, TAGS, type CustomerOperation } from './operations';
import { Problem } from '../core/problem';

type JsonSchema = Record<string, unknown>;

/**
 * Converts a zod schema to an OpenAPI 3.1 schema object. Named schemas (`.meta({ id })`) land in
 * `components` and are referenced as `#/components/schemas/<id>`; nothing carries `$id`/`$schema`.
 */
function collector() {
  const components: Record<string, JsonSchema> = {};
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!node || typeof node !== 'object') return node;
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$schema' || k === '$id' || k === '$defs') continue;
      out[k] = k === '$ref' && typeof v === 'string' ? v.replace(/^#\/\$defs\//, '#/components/schemas/') : rewrite(v);
    }
    return out;
  };
  const schema = (s: z.ZodType, io: 'input' | 'output' = 'output'): JsonSchema => {
    const json = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as JsonSchema;
    for (const [id, def] of Object.entries((json.$defs ?? {}) as Record<string, JsonSchema>)) components[id] ??= rewrite(def) as JsonSchema;
    return rewrite(json) as JsonSchema;
  };
  return { components, schema };
}

type Collector = ReturnType<typeof collector>;

/** Parameter schemas describe the decoded value: the string patterns that parse it are not shown. */
function withoutPatterns(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutPatterns);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k]) => k !== 'pattern')
      .map(([k, v]) => [k, withoutPatterns(v)]),
  );
}

function parameterSchema(c: Collector, field: z.ZodType): { description?: string; schema: JsonSchema } {
  const { description, ...schema } = withoutPatterns(c.schema(field, 'input')) as JsonSchema;
  return { description: description as string | undefined, schema };
}

/** A query-string example typed as its schema says (5, not "5"). */
function typedExample(schema: JsonSchema, value: string | undefined): unknown {
  if (value === undefined) return undefined;
  return schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;
}

/** Query parameters: the schema's fields, then each alias (docs/contracts.md §4: the canonical name wins). */
function queryParameters(c: Collector, op: CustomerOperation) {
  const out: JsonSchema[] = [];
  const param = (name: string, field: z.ZodType, description?: string) => {
    const { description: own, schema } = parameterSchema(c, field);
    const example = typedExample(schema, op.example.query?.[name]);
    out.push({
      name,
      in: 'query',
      required: !field.safeParse(undefined).success,
      description: description ?? own,
      schema,
      ...(schema.type === 'array' ? { style: 'form', explode: true } : {}),
      ...(example !== undefined ? { example } : {}),
    });
  };
  for (const [name, field] of Object.entries(op.query.shape)) param(name, field as z.ZodType);
  for (const [name, alias] of Object.entries(ALIASES)) {
    const field = op.query.shape[name] as z.ZodType | undefined;
    if (field) param(alias, field, `Alias of \`${name}\`; ignored when \`${name}\` is given.`);
  }
  return out;
}

function pathParameters(c: Collector, op: CustomerOperation) {
  return Object.entries(op.pathParams?.shape ?? {}).map(([name, field]) => {
    const { description, schema } = parameterSchema(c, field as z.ZodType);
    return { name, in: 'path', required: true, description, schema, example: typedExample(schema, op.example.params?.[name]) };
  });
}

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** The 200 answer: JSON, a streamed download of records (NDJSON or CSV), or one stored file. */
function okResponse(c: Collector, op: CustomerOperation) {
  if (op.download === 'file') {
    return {
      description: "The file's bytes, streamed, with the Content-Type it was stored with",
      headers: {
        'Content-Disposition': { description: 'attachment; filename="<ASCII fallback>"; filename*=UTF-8\'\'<name>', schema: { type: 'string' } },
        'X-Content-Type-Options': { description: 'nosniff', schema: { type: 'string' } },
      },
      content: { 'application/octet-stream': { schema: c.schema(op.response), example: op.example.response } },
    };
  }
  if (op.download === 'records') {
    return {
      description: 'The records as a streamed attachment (Content-Disposition)',
      content: {
        'application/x-ndjson': { schema: c.schema(op.response), example: op.example.response },
        'text/csv': { schema: { type: 'string', description: 'RFC 4180: a header row of field names, then one row per record' } },
      },
    };
  }
  return { description: 'OK', content: { 'application/json': { schema: c.schema(op.response), example: op.example.response } } };
}

function operationObject(c: Collector, op: CustomerOperation) {
  const hasQuery = Object.keys(op.query.shape).length > 0;
  return {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    security: [{ apiKey: [] }],
    parameters: [...pathParameters(c, op), ...queryParameters(c, op)],
    responses: {
      200: okResponse(c, op),
      ...(hasQuery ? { 400: problem('Invalid parameter(s); `errors` lists each') } : {}),
      401: problem('Missing, malformed, unknown, revoked or other-environment API key'),
      ...(op.notFound ? { 404: problem(op.notFound) } : {}),
      405: problem('Any method other than GET or HEAD'),
      503: problem('Database unreachable; retry after Retry-After seconds'),
    },
  };
}

let cached: unknown;

/** The OpenAPI 3.1 document, derived from the operation table and its zod schemas. */
export function openApiDocument(): unknown {
  if (cached) return cached;
  const c = collector();
  c.schema(Problem);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of CUSTOMER_OPERATIONS) {
    paths[op.path] ??= {};
    paths[op.path]![op.method.toLowerCase()] = operationObject(c, op);
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'svc Customer API',
      version: '2.0.0',
      description:
        "Read-only access to an account's AI answer records and conversations. " +
        'Authenticate with `Authorization: Bearer <API key>`. Timestamps are UTC, `YYYY-MM-DD HH:MM:SS`. ' +
        'Errors are RFC 9457 problem details.',
    },
    servers: [{ url: API_BASE }],
    tags: TAGS,
    paths,
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'svc_<live|test>_<key id>_<secret>' } },
      schemas: Object.fromEntries(Object.entries(c.components).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
  return cached;
}
