import { readJsonCapped, SMALL_BODY_BYTES } from '../net/body';
import { apiRoute } from './handler';

/**
 * Widget endpoints are called cross-origin from integrators' pages, without cookies, so they
 * answer any origin (`*`); who may use them is decided by tokens and registered domains.
 */
export const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'authorization, content-type, x-svc-visitor',
  'Access-Control-Max-Age': '600',
};

export function widgetRoute(fn: (req: Request, requestId: string) => Promise<Response>) {
  return apiRoute(async (req, _params, requestId) => fn(req, requestId));
}

export function withCors(res: Response, methods: string): Response {
  for (const [k, v] of Object.entries(CORS_HEADERS)) res.headers.set(k, v);
  res.headers.set('Access-Control-Allow-Methods', `${methods}, OPTIONS`);
  res.headers.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
  return res;
}

export function preflight(methods: string) {
  return async () => withCors(new Response(null, { status: 204 }), methods);
}

/** The client address, as the server stamped it under the TRUST_PROXY rules (lib/net/client-address). */
export function clientIp(req: Request): string {
  return req.headers.get('x-svc-peer-ip') ?? 'unknown';
}

/** The JSON body of a widget request, capped while it streams (lib/net/body). */
export async function readJsonBody(req: Request, maxBytes = SMALL_BODY_BYTES): Promise<unknown> {
  return readJsonCapped(req, maxBytes);
}
