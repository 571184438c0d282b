import type { IncomingMessage, ServerResponse } from 'node:http';
import { sessionFromCookieHeader } from '../auth/session';
import { AppError } from '../core/errors';
import { problemBody } from '../core/problem';
import limits from '../net/body-limits.json';

/**
 * Dashboard pages take a request body only for a server action of a signed-in member (or one of
 * the small signed-out forms of PUBLIC_ACTIONS). Anything
 * else with a body (an anonymous POST to `/` or `/login`, a server action without a live session)
 * is refused BEFORE Next reads a byte of it (Next would otherwise buffer it for the proxy or the
 * action decoder), and the connection is closed so an endless body stops at once. A declared
 * body over the server-action cap is refused the same way; an undeclared one is cut off by
 * Next's own on-stream bodySizeLimit (next.config.mjs).
 */
export const SERVER_ACTION_BODY_MAX = limits.serverActionBodyBytes; // next.config.mjs reads the same file
const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);
const OWN_BODIES = /^\/(api|customer-api|socket\.io|_next)(\/|$)/;
/** The signed-out pages whose forms are server actions (an invitation, a reset, sign-up); small forms only. */
const PUBLIC_ACTIONS = /^\/(invite\/[^/]+|reset-password\/[^/]+|forgot-password|signup(\/confirm\/[^/]+)?)$/;
const PUBLIC_ACTION_BODY_MAX = 16 * 1024;

function refuse(req: IncomingMessage, res: ServerResponse, code: 'method_not_allowed' | 'payload_too_large' | 'forbidden', detail: string): true {
  const error = new AppError(code, detail);
  const body = JSON.stringify(problemBody(error, req.headers['x-request-id'] as string | undefined));
  res.writeHead(error.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
    ...(code === 'method_not_allowed' ? { allow: 'GET, HEAD' } : {}),
  });
  res.end(body, () => req.socket.destroy());
  return true;
}

/**
 * A server action: the page script's request (its Next-Action header), or the action's form itself,
 * posted before the script ran (a slow connection; multipart, the action's id among its fields:
 * Next runs it and renders the page with its result).
 */
function isServerAction(req: IncomingMessage): boolean {
  return Boolean(req.headers['next-action']) || /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');
}

/** Cheap and synchronous: false for the requests refusePageBody never looks at (GETs, API routes). */
export function mayCarryPageBody(req: IncomingMessage): boolean {
  return !BODYLESS.has(req.method ?? 'GET') && !OWN_BODIES.test((req.url ?? '/').split('?')[0]!);
}

/** True when the request was refused here (the response is written). */
export async function refusePageBody(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (!mayCarryPageBody(req)) return false;
  if (!isServerAction(req)) return refuse(req, res, 'method_not_allowed', 'Dashboard pages accept only GET and HEAD.');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > SERVER_ACTION_BODY_MAX) return refuse(req, res, 'payload_too_large', `The request body is larger than ${SERVER_ACTION_BODY_MAX} bytes.`);
  if (PUBLIC_ACTIONS.test((req.url ?? '/').split('?')[0]!)) {
    return declared > PUBLIC_ACTION_BODY_MAX
      ? refuse(req, res, 'payload_too_large', `The request body is larger than ${PUBLIC_ACTION_BODY_MAX} bytes.`)
      : false;
  }
  const cookie = req.headers.cookie;
  if (!cookie || !(await sessionFromCookieHeader(cookie).catch(() => null))) {
    return refuse(req, res, 'forbidden', 'Server actions need a signed-in dashboard session.');
  }
  return false;
}
