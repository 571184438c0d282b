import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { resolveCustomerPath, type DirectAnswer, type DirectHandler, type RouteHandler, type RouteHandlers } from './route';
import { JSON_HEADERS, type ApiRequest } from '../api/handler';
import { AppError } from '../core/errors';
import { API_BASE } from './operations';
import securityHeaders from '../net/security-headers.json';

const SECURITY_HEADERS = Object.entries({ ...securityHeaders.everywhere, ...securityHeaders.notEmbedded }).map(([k, v]) => [k.toLowerCase(), v] as const);
import { problemResponse, toAppError } from '../core/problem';

/** Canonical paths (after trailing slashes are dropped): anything else Next would normalise (`//`, dot segments, escapes) goes to Next. */
const CANONICAL = new RegExp(`^${API_BASE.replace(/[/-]/g, '\\$&')}(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*$`);

let enabled = true;

/** Off: every request goes through Next. Tests switch it to compare the two doors on one server. */
export function setDirectApiEnabled(on: boolean): void {
  enabled = on;
}

/**
 * The direct door to the Customer API: requests that carry an Authorization header go straight to
 * the handlers the route files export (resolved from the same operation table), skipping Next's
 * routing. Requests without the header (the dashboard's cookie, the public document, browsers'
 * preflights) go through Next, except on a path with a trailing slash. Returns false when the
 * request is not for this door.
 */
export function handleDirectApi(req: IncomingMessage, res: ServerResponse): boolean {
  if (!enabled) return false;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  // Next's router answers a malformed escape in a dynamic segment with a bare text 500: such
  // paths are answered here, with or without credentials (the handler checks them first). A
  // canonical path holds no escape, so only the others are decoded to look for one.
  // Trailing slashes name the same operation and are answered here, with or without credentials:
  // Next would 308 to the path without them, re-escaping the query (and resetting the connection
  // when the query is long).
  const slashed = pathname.startsWith(`${API_BASE}/`) && pathname.endsWith('/');
  const path = slashed ? pathname.replace(/\/+$/, '') : pathname;
  const canonical = (slashed || !!req.headers.authorization) && CANONICAL.test(path);
  if (!canonical && !(pathname.startsWith(`${API_BASE}/`) && hasMalformedEscape(pathname))) return false;
  const method = req.method ?? 'GET';
  const { handlers, direct, params } = resolveCustomerPath(path);
  const key = (method === 'HEAD' ? 'GET' : method) as keyof RouteHandlers;
  const handler: RouteHandler | DirectHandler | undefined = direct[key] ?? handlers[key];
  if (!handler) return false;
  answer(req, res, handler, direct[key] !== undefined, url, params);
  return true;
}

/**
 * Runs the handler and writes its answer. Written with one `then` rather than `async`/`await`:
 * every promise costs more under the AsyncLocalStorage hooks Next keeps on in this process, and a
 * JSON answer needs none beyond the handler's own.
 */
function answer(
  req: IncomingMessage,
  res: ServerResponse,
  handler: RouteHandler | DirectHandler,
  isDirect: boolean,
  url: string,
  params: Record<string, string>,
): void {
  const head = req.method === 'HEAD';
  let pending: Promise<DirectAnswer>;
  try {
    // The origin is a constant: the handlers read only the path and query, and a malformed Host
    // header must not stop the request from being answered.
    pending = isDirect
      ? (handler as DirectHandler)(lightRequest(req, url), params)
      : (handler as RouteHandler)(toRequest(req, url), { params: Promise.resolve(params) });
  } catch (e) {
    pending = Promise.resolve(failure(e));
  }
  pending.then(
    (response) => deliver(res, response, head),
    (e) => deliver(res, failure(e), head),
  );
}

function deliver(res: ServerResponse, response: DirectAnswer, head: boolean): void {
  if (!(response instanceof Response)) {
    try {
      sendJson(res, response, head);
    } catch (e) {
      void recover(res, e, head);
    }
    return;
  }
  send(res, response, head).catch((e) => recover(res, e, head));
}

async function recover(res: ServerResponse, e: unknown, head: boolean): Promise<void> {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  await send(res, failure(e), head).catch(() => res.destroy());
}

function toRequest(req: IncomingMessage, url: string): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === 'string') headers.set(k, v);
    else if (Array.isArray(v)) for (const x of v) headers.append(k, x);
  }
  try {
    return new Request(`http://localhost${url}`, { method: req.method === 'HEAD' ? 'GET' : req.method, headers });
  } catch {
    throw new AppError('invalid_request', 'The request line or its headers could not be read.');
  }
}

/**
 * What a direct form reads of the request (ApiRequest) without building a Request: the URL is
 * checked as toRequest checks it; a header is read as Headers.get reads it (names in any case,
 * repeated values joined by ", "; Node's parser has already trimmed them).
 */
function lightRequest(req: IncomingMessage, url: string): ApiRequest {
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(`http://localhost${url}`);
  } catch {
    throw new AppError('invalid_request', 'The request line or its headers could not be read.');
  }
  return {
    url: parsedUrl.href,
    parsedUrl,
    headers: {
      get(name: string): string | null {
        const v = req.headers[name.toLowerCase()];
        return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
      },
    },
  };
}

function hasMalformedEscape(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return false;
  } catch {
    return true;
  }
}

/** Every failure of this door is written by the one problem writer. */
function failure(e: unknown): Response {
  const requestId = randomUUID();
  return problemResponse(toAppError(e, requestId), requestId);
}

/** A direct form's JSON, with the headers send() would write for the same jsonResponse (same order). */
function sendJson(res: ServerResponse, answer: { json: string; requestId: string }, head: boolean): void {
  const out: Record<string, string> = {};
  for (const [k, v] of SECURITY_HEADERS) out[k] = v;
  for (const [k, v] of JSON_HEADER_LIST) out[k] = v;
  out['x-request-id'] = answer.requestId;
  const body = head ? '' : answer.json;
  if (!head) out['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(200, out);
  res.end(body);
}
const JSON_HEADER_LIST = Object.entries(JSON_HEADERS)
  .map(([k, v]) => [k.toLowerCase(), v] as const)
  .sort(([a], [b]) => a.localeCompare(b));

async function send(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  if (response.headers.has('content-disposition') && response.body) return sendStream(res, response, head);
  const body = head || response.body === null ? '' : Buffer.from(await response.arrayBuffer());
  const out: Record<string, string> = {};
  // The headers Next adds to its own answers (next.config.mjs reads the same file): both doors alike.
  for (const [k, v] of SECURITY_HEADERS) out[k] = v;
  response.headers.forEach((v, k) => {
    out[k] = v;
  });
  if (!head) out['content-length'] = String(body.length);
  res.writeHead(response.status, out);
  res.end(body);
}

/**
 * A download (docs/contracts.md §10) is piped, not buffered: `pipeline` waits for the socket to drain
 * before it pulls the next chunk, so a slow reader holds the export instead of growing memory.
 */
async function sendStream(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  const out: Record<string, string> = {};
  for (const [k, v] of SECURITY_HEADERS) out[k] = v;
  response.headers.forEach((v, k) => {
    out[k] = v;
  });
  res.writeHead(response.status, out);
  if (head) {
    await response.body!.cancel();
    res.end();
    return;
  }
  await pipeline(Readable.fromWeb(response.body! as import('node:stream/web').ReadableStream<Uint8Array>), res).catch(() => res.destroy());
}
