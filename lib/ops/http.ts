import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../core/errors';
import { problemBody, problemResponse, requestIdFrom } from '../core/problem';
import { getEnv } from '../env';
import { PEER_IP_HEADER } from '../net/client-address';
import { getLogger } from '../core/logger';
import { metrics, renderMetrics } from './metrics';
import { checkReadiness } from './readiness';
import { DASHBOARD_PAGES } from '../auth/pages';

/**
 * The operations doors of the HTTP server (docs/contracts.md §9), answered before Next: GET /readyz and
 * GET /metrics; and `trackRequest`, which gives every request an id (X-Request-Id, reused by the
 * API handlers), times it into the request histogram and logs it.
 */

const EXACT = new Set([
  ...DASHBOARD_PAGES.map((p) => p.path),
  '/login',
  '/healthz',
  '/readyz',
  '/metrics',
  '/chatbot/loader.js',
  '/api/widget/token',
  '/api/widget/uploads',
  '/api/widget/config',
  '/customer-api/v2/openapi.json',
  '/customer-api/v2/docs',
  '/customer-api/v2/response',
  '/customer-api/v2/conversation',
  '/customer-api/v2/response/export',
  '/customer-api/v2/conversation/export',
]);
const RULES: Array<[RegExp, string]> = [
  [/^\/_next\/static\//, '/_next/static/*'],
  [/^\/_next\//, '/_next/*'],
  [/^\/api\/auth\//, '/api/auth/*'],
  [/^\/chatbot\/manifests\/[^/]+\/[^/]+\/manifest\.json$/, '/chatbot/manifests/:kind/:name/manifest.json'],
  [/^\/chatbot\/v\//, '/chatbot/v/*'],
  [/^\/chat\/v0\//, '/chat/v0/*'],
  [/^\/customer-api\/v2\/response\/[^/]+$/, '/customer-api/v2/response/:id'],
  [/^\/customer-api\/v2\/conversation\/[^/]+$/, '/customer-api/v2/conversation/:id'],
  [/^\/customer-api\/v2\/attachments\/[^/]+$/, '/customer-api/v2/attachments/:id'],
  [/^\/conversations\/[^/]+$/, '/conversations/:id'],
  [/^\/attachments\/[^/]+$/, '/attachments/:id'],
  [/^\/api\/widget\/uploads\/[^/]+$/, '/api/widget/uploads/:id'],
];

/** A request path as a low-cardinality route label: known templates, else `other`. */
export function routeTemplate(url: string): string {
  const q = url.indexOf('?');
  let p = q < 0 ? url : url.slice(0, q);
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (EXACT.has(p)) return p;
  for (const [re, template] of RULES) if (re.test(p)) return template;
  return 'other';
}

/** Called first for every HTTP request: request id, duration histogram, access log. */
export function trackRequest(req: IncomingMessage, res: ServerResponse): void {
  const started = process.hrtime.bigint();
  const id = requestIdFrom(req.headers['x-request-id']);
  req.headers['x-request-id'] = id;
  res.setHeader('X-Request-Id', id);
  res.once('close', () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const status = res.writableFinished ? res.statusCode : 499; // 499: the client went away first
    const route = routeTemplate(req.url ?? '/');
    metrics.httpRequest(req.method ?? 'GET', route, status, seconds);
    const env = getEnv();
    if (env.LOG_FORMAT === 'json' || env.LOG_REQUESTS) {
      getLogger().info(
        {
          req_id: id,
          method: req.method,
          route,
          path: (req.url ?? '/').split('?')[0]!.slice(0, 300),
          status,
          duration_ms: Math.round(seconds * 10_000) / 10,
          // The client as TRUST_PROXY resolves it (stamped before this runs), and the socket peer (the proxy).
          client: req.headers[PEER_IP_HEADER],
          peer: req.socket.remoteAddress,
        },
        'request',
      );
    }
  });
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** Headers a proxy adds for the client behind it (RFC 7239, the de facto X-Forwarded-* family, Via, and common client-IP headers). */
const FORWARDING = /^(forwarded|via|x-forwarded-.*|x-real-ip|x-client-ip|x-cluster-client-ip|true-client-ip|cf-connecting-ip|fastly-client-ip)$/;
const forwarded = (req: IncomingMessage) => Object.keys(req.headers).some((h) => FORWARDING.test(h));

/**
 * Loopback peers may read /metrics. A request carrying any forwarding header is never treated as
 * loopback, since a proxy on this host (nginx) is a loopback peer too, whichever header it adds.
 */
function metricsRefusal(req: IncomingMessage): AppError | null {
  const token = getEnv().METRICS_TOKEN;
  const auth = req.headers.authorization;
  if (token && typeof auth === 'string' && auth.startsWith('Bearer ')) {
    const given = Buffer.from(auth.slice(7));
    const want = Buffer.from(token);
    if (given.length === want.length && timingSafeEqual(given, want)) return null;
    return new AppError('unauthorized', 'The metrics token is not valid.');
  }
  const direct = LOOPBACK.test(req.socket.remoteAddress ?? '') && !forwarded(req);
  if (direct) return null;
  if (token) return new AppError('unauthorized', 'Metrics need `Authorization: Bearer <METRICS_TOKEN>` from this address.');
  return new AppError('forbidden', 'Metrics are served to loopback peers only (set METRICS_TOKEN to allow others with a token).');
}

async function send(req: IncomingMessage, res: ServerResponse, response: Response): Promise<void> {
  const body = req.method === 'HEAD' ? '' : await response.text();
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  if (req.method !== 'HEAD') headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(response.status, headers);
  res.end(body);
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
  });

async function answer(path: '/readyz' | '/metrics', req: IncomingMessage): Promise<Response> {
  const id = req.headers['x-request-id'] as string;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return problemResponse(new AppError('method_not_allowed', `${path} only allows GET.`, { headers: { Allow: 'GET, HEAD' } }), id);
  }
  if (path === '/readyz') {
    const r = await checkReadiness();
    return json(r.ready ? 200 : 503, r.body);
  }
  const refusal = metricsRefusal(req);
  if (refusal) return problemResponse(refusal, id);
  const { contentType, body } = await renderMetrics();
  return new Response(body, { status: 200, headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store' } });
}

/** Answers GET /readyz and GET /metrics; returns false for every other path. */
export function handleOpsRequest(req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path !== '/readyz' && path !== '/metrics') return false;
  answer(path, req)
    .then((r) => send(req, res, r))
    .catch((e) => {
      const id = req.headers['x-request-id'] as string;
      getLogger().error({ req_id: id, err: e }, `${path} failed`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/problem+json' });
      res.end(JSON.stringify(problemBody(new AppError('internal', 'An unexpected error occurred.'), id)));
    });
  return true;
}
