import type { IncomingMessage, ServerResponse } from 'node:http';
import { matchCustomerRoute } from '../api/customer-handlers';
import { getLogger } from '../ops/logger';

/**
 * The direct door to the Customer API: GET/HEAD requests that carry an Authorization header go
 * straight to the same handlers the route files export. Everything else (other methods, the
 * dashboard's cookie requests, openapi.json) goes through Next. Returns false when not handled.
 */
export function handleDirectApi(req: IncomingMessage, res: ServerResponse): boolean {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.headers.authorization) return false;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const route = matchCustomerRoute(q < 0 ? url : url.slice(0, q));
  if (!route) return false;
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === 'string') headers.set(k, v);
    else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
  }
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${url}`, { method: 'GET', headers });
  route.handler(request, { params: Promise.resolve(route.params) }).then(async (response) => {
    const body = req.method === 'HEAD' ? '' : await response.text();
    const out: Record<string, string> = {};
    response.headers.forEach((v, k) => { out[k] = v; });
    if (req.method !== 'HEAD') out['content-length'] = String(Buffer.byteLength(body));
    res.writeHead(response.status, out);
    res.end(body);
  }, (e) => {
    getLogger().error({ req_id: req.headers['x-request-id'] as string, err: e }, 'direct API handler failed');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ type: 'urn:svc:problem:internal', title: 'Internal Server Error', status: 500, detail: 'An unexpected error occurred.' }));
  });
  return true;
}
