import { AppError } from '../core/errors';
import { problemResponse, requestIdFrom, toAppError } from '../core/problem';

type Ctx<P> = { params: Promise<P> };
type Handler<P> = (req: Request, params: P, requestId: string) => Promise<Response>;

/** What the Customer API's work reads of a request: its URL and headers (a Request is one; the direct door passes a lighter one). */
export type ApiRequest = {
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  /** `url` already parsed, when the door had to parse it anyway (the direct door): parsed once per request. */
  readonly parsedUrl?: URL;
};

/** The client's X-Request-Id when it is a sane token, else a new one. */
export function requestIdOf(req: ApiRequest): string {
  return requestIdFrom(req.headers.get('x-request-id'));
}

/** The problem+json answer to a failed request (what every wrapper of a handler answers). */
export function failureResponse(e: unknown, req: ApiRequest, requestId: string): Response {
  const res = problemResponse(toAppError(e, requestId), requestId);
  if (/^\/(api\/widget|chatbot)\//.test(new URL(req.url).pathname)) {
    res.headers.set('Access-Control-Allow-Origin', '*');
    res.headers.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
  }
  return res;
}

/** Wraps a route handler: request id, problem+json for every failure, no internals leaked. */
export function apiRoute<P = Record<string, never>>(fn: Handler<P>) {
  return async (req: Request, ctx: Ctx<P>): Promise<Response> => {
    const requestId = requestIdOf(req);
    try {
      const res = await fn(req, await ctx.params, requestId);
      res.headers.set('X-Request-Id', requestId);
      return res;
    } catch (e) {
      return failureResponse(e, req, requestId);
    }
  };
}

/** The headers of every JSON answer (jsonResponse, and the direct door's answers written without a Response). */
export const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'private, no-store' } as const;

export function jsonResponse(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { ...JSON_HEADERS, ...init.headers },
  });
}

/** Handlers for every method a read-only resource refuses; checked before credentials. */
export function methodNotAllowed(allow: string) {
  const handler = apiRoute(async () => {
    throw new AppError('method_not_allowed', `This resource only allows ${allow}.`, { headers: { Allow: allow } });
  });
  return { GET: handler, POST: handler, PUT: handler, PATCH: handler, DELETE: handler, OPTIONS: handler };
}
