import { getLogger } from './logger';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AppError, fromDatabaseError, isAppError } from './errors';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** RFC 9457 problem details: the schema of every error body (and of the OpenAPI document's). */
export const Problem = z
  .object({
    type: z.string().meta({ description: 'urn:svc:problem:<code>' }),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    errors: z
      .array(z.object({ param: z.string(), message: z.string() }))
      .optional()
      .meta({ description: 'For 400: one entry per invalid parameter, named as the client spelled it' }),
    operations: z.array(z.string()).optional().meta({ description: 'For an unknown path: the operations that exist' }),
    request_id: z.string().optional(),
  })
  .meta({ id: 'Problem', description: 'RFC 9457 problem details (application/problem+json)' });
export type Problem = z.infer<typeof Problem>;

/** The one writer of RFC 9457 problem details (the body; problemResponse adds the headers). */
export function problemBody(error: AppError, requestId: string | undefined): Problem {
  return {
    type: `urn:svc:problem:${error.code.replace(/_/g, '-')}`,
    title: TITLES[error.status] ?? 'Error',
    status: error.status,
    detail: error.message,
    ...(error.errors ? { errors: error.errors } : {}),
    ...(error.operations ? { operations: error.operations } : {}),
    ...(requestId ? { request_id: requestId } : {}),
  };
}

/** A problem+json Response of the error. */
export function problemResponse(error: AppError, requestId: string, extraHeaders: Record<string, string> = {}): Response {
  const body = problemBody(error, requestId);
  const headers: Record<string, string> = {
    'Content-Type': 'application/problem+json',
    'Cache-Control': 'no-store',
    'X-Request-Id': requestId,
    ...extraHeaders,
    ...error.headers,
  };
  if (error.status === 401) headers['WWW-Authenticate'] ??= 'Bearer realm="svc"';
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/** Known errors keep their code; database outages become 503; anything else is a logged 500. */
export function toAppError(e: unknown, requestId: string): AppError {
  if (isAppError(e)) return e;
  const db = fromDatabaseError(e);
  if (db) return db;
  getLogger().error({ req_id: requestId, err: e }, 'unexpected error');
  return new AppError('internal', `An unexpected error occurred; quote request id ${requestId} when reporting it.`);
}

/** The client's X-Request-Id when it is a sane token, else a new one. */
export function requestIdFrom(given: string | string[] | null | undefined): string {
  return typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
}
