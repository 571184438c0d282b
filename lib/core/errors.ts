import type { IssueParam } from '../zod-issues';

/** The one error type of the service. Codes are a closed list; lib/core/problem.ts maps them to HTTP. */
export const ERROR_STATUS = {
  invalid_parameters: 400,
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  /** A per-conversation or per-answer cap is full (comments per answer, visitor messages per conversation): retrying does not help. */
  limit_reached: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  database_busy: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A request field and what is wrong with it (the shape of lib/zod-issues.ts's formatter). */
export type ParamError = IssueParam;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly errors?: ParamError[];
  readonly headers?: Record<string, string>;
  /** For an unknown Customer API path: the operations that exist ("GET /customer-api/v2/…"). */
  readonly operations?: string[];

  constructor(code: ErrorCode, detail: string, opts: { errors?: ParamError[]; headers?: Record<string, string>; operations?: string[] } = {}) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.errors = opts.errors;
    this.headers = opts.headers;
    this.operations = opts.operations;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof Error && e.name === 'AppError' && typeof (e as AppError).code === 'string';
}

const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/**
 * Maps database failures to AppErrors by SQLSTATE / driver code, the one place that does so.
 * Connection loss, shutdown and a read-only server (25006: a standby, or an old primary while the
 * pool moves to the promoted one; the write did not happen) become 503; others stay unknown.
 */
export function fromDatabaseError(e: unknown): AppError | undefined {
  if (isAppError(e)) return e;
  // drizzle wraps driver errors (DrizzleQueryError.cause): look down the cause chain.
  for (let err: unknown = e, depth = 0; err && depth < 5; err = (err as { cause?: unknown }).cause, depth++) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (UNAVAILABLE_NODE_CODES.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03', '53300', '25006'].includes(code)) {
      return new AppError('unavailable', 'The database is unreachable; try again shortly.', { headers: { 'Retry-After': '5' } });
    }
    // statement_timeout (DATABASE_STATEMENT_TIMEOUT_MS) ended the query: the server is overloaded, not the request wrong.
    if (code === '57014') {
      return new AppError('unavailable', 'The query took longer than the server allows; try again shortly.', { headers: { 'Retry-After': '5' } });
    }
  }
  return undefined;
}
