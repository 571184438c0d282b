import type { z } from 'zod';
import { customerPrincipalOf, type CustomerPrincipal } from '../auth/customer-api';
import { validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { apiRoute, failureResponse, jsonResponse, requestIdOf, type ApiRequest } from '../api/handler';
import { openApiDocument } from './openapi';
import { API_BASE, CUSTOMER_OPERATIONS, operationList, type CustomerOperation } from './operations';

/**
 * Routing of the Customer API, derived from the operation table (lib/customer-api/operations.ts). The route
 * files under app/customer-api/v2 export `routeHandlers(path)`; the direct door
 * (lib/customer-api/direct-door.ts) calls `resolveCustomerPath`, which hands out the very same functions.
 */
export type RouteHandler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type RouteHandlers = Record<(typeof ROUTE_METHODS)[number], RouteHandler>;

/** Path ids that fail their schema are 404s, exactly like unknown ids (docs/contracts.md §4). */
function pathParams(op: CustomerOperation, raw: Record<string, string>): Record<string, string> {
  if (!op.pathParams) return {};
  try {
    return validate(op.pathParams as z.ZodType<Record<string, string>>, raw);
  } catch {
    const what = op.path.split('/')[1]!.replace(/s$/, ''); // '/attachments/{attachment_id}' → 'attachment'
    throw new AppError('not_found', `No ${what} with id ${String(Object.values(raw)[0]).slice(0, 100)}.`);
  }
}

/**
 * An operation's work for either door: authenticate (key or session), check the path, one service
 * call. May throw instead of rejecting (both doors' callers handle both); with a key this process
 * has just read, the principal is known without a promise.
 */
function runOperation(op: CustomerOperation, selfPath: string, req: ApiRequest, raw: Record<string, string>): Promise<unknown> {
  const principal = customerPrincipalOf(req);
  if (principal instanceof Promise) return principal.then((p) => runAs(op, selfPath, req, raw, p));
  return runAs(op, selfPath, req, raw, principal);
}

function runAs(op: CustomerOperation, selfPath: string, req: ApiRequest, raw: Record<string, string>, principal: CustomerPrincipal): Promise<unknown> {
  const params = pathParams(op, raw);
  return op.run({ principal, params, query: (req.parsedUrl ?? new URL(req.url)).searchParams, selfPath });
}

/** A Customer API operation as a route handler: its work, answered as JSON (or its download). */
function operationHandler(op: CustomerOperation): RouteHandler {
  const selfPath = `${API_BASE}${op.path}`;
  return apiRoute<Record<string, string>>(async (req, raw) => {
    const result = await runOperation(op, selfPath, req, raw);
    return op.download ? (result as Response) : jsonResponse(result);
  });
}

/**
 * The direct door's form of a JSON operation: the same work and the same failures as its route
 * handler, but it takes the door's light request (no Request to build) and a success is handed
 * back as the JSON text and its request id, which the door writes with JSON_HEADERS, instead of a
 * Response it would have to build and read back (in a profile of the list request, building the
 * Request and the Response and reading it back were ~20% of the server's CPU).
 */
export type DirectAnswer = { json: string; requestId: string } | Response;
export type DirectHandler = (req: ApiRequest, params: Record<string, string>) => Promise<DirectAnswer>;

function directOperation(op: CustomerOperation): DirectHandler {
  const selfPath = `${API_BASE}${op.path}`;
  // One `then`, no async function: see answer() in lib/customer-api/direct-door.ts.
  return (req, raw) => {
    const requestId = requestIdOf(req);
    const fail = (e: unknown) => failureResponse(e, req, requestId);
    let work: Promise<unknown>;
    try {
      work = runOperation(op, selfPath, req, raw);
    } catch (e) {
      return Promise.resolve(fail(e));
    }
    return work.then((result) => {
      try {
        return { json: JSON.stringify(result), requestId };
      } catch (e) {
        return fail(e);
      }
    }, fail);
  };
}

function refuse(allow: string): RouteHandler {
  return apiRoute<Record<string, string>>(async () => {
    throw new AppError('method_not_allowed', `This resource only allows ${allow}.`, { headers: { Allow: allow } });
  });
}

/** CORS for the public document, so browser tools on other origins can load it. */
const OPENAPI_CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
  'Access-Control-Allow-Headers': 'Accept, Authorization, Content-Type',
  'Access-Control-Max-Age': '86400',
};

function openApiHandlers(): RouteHandlers {
  const allow = 'GET, HEAD, OPTIONS';
  const no = refuse(allow);
  return {
    GET: apiRoute<Record<string, string>>(async () =>
      jsonResponse(openApiDocument(), {
        headers: { 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
      }),
    ),
    OPTIONS: apiRoute<Record<string, string>>(async () => new Response(null, { status: 204, headers: { ...OPENAPI_CORS, Allow: allow } })),
    POST: no,
    PUT: no,
    PATCH: no,
    DELETE: no,
  };
}

function operationHandlers(ops: CustomerOperation[]): RouteHandlers {
  const allow = [...new Set([...ops.map((o) => o.method), 'HEAD'])].join(', ');
  const no = refuse(allow);
  const out = { GET: no, POST: no, PUT: no, PATCH: no, DELETE: no, OPTIONS: no };
  for (const op of ops) out[op.method] = operationHandler(op);
  return out;
}

function unknownPathHandlers(): RouteHandlers {
  const known = operationList();
  const handler = apiRoute<Record<string, string>>(async (req) => {
    const path = new URL(req.url).pathname.slice(0, 200);
    throw new AppError('not_found', `No operation at ${path}. The Customer API has: ${known.join(', ')}.`, { operations: known });
  });
  return { GET: handler, POST: handler, PUT: handler, PATCH: handler, DELETE: handler, OPTIONS: handler };
}

/** `direct`: the JSON operations' direct forms by method (downloads and refusals use `handlers`). */
type Route = { path: string; segments: string[]; handlers: RouteHandlers; direct: Partial<Record<RouteMethod, DirectHandler>> };
type RouteMethod = (typeof ROUTE_METHODS)[number];

/** Every route file of app/customer-api/v2, by path template (relative to API_BASE). Built once. */
function buildRoutes(): Map<string, Route> {
  const byPath = new Map<string, CustomerOperation[]>();
  for (const op of CUSTOMER_OPERATIONS) byPath.set(op.path, [...(byPath.get(op.path) ?? []), op]);
  const routes = new Map<string, Route>();
  const add = (path: string, handlers: RouteHandlers, direct: Route['direct'] = {}) =>
    routes.set(path, { path, segments: path.split('/').slice(1), handlers, direct });
  for (const [path, ops] of byPath) {
    add(path, operationHandlers(ops), Object.fromEntries(ops.filter((o) => !o.download).map((o) => [o.method, directOperation(o)])));
  }
  add('/openapi.json', openApiHandlers());
  return routes;
}

// Per module copy on purpose: Next's bundle and server.ts each build their own from the same table.
type State = { routes: Map<string, Route>; unknown: RouteHandlers };
let built: State | undefined;
function state(): State {
  built ??= { routes: buildRoutes(), unknown: unknownPathHandlers() };
  return built;
}

/** The handlers a route file exports, for its path template ('/response/{response_id}'). */
export function routeHandlers(path: string): RouteHandlers {
  const route = state().routes.get(path);
  if (!route) throw new Error(`No Customer API route ${path} in lib/customer-api/operations.ts`);
  return route.handlers;
}

/** What the catch-all route file exports: a problem+json 404 naming the operations. */
export function unknownPathRouteHandlers(): RouteHandlers {
  return state().unknown;
}

export function customerRoutePaths(): string[] {
  return [...state().routes.keys()];
}

/**
 * The handlers and path parameters for a canonical path under API_BASE (no trailing slash, no
 * empty or dot segments: the caller leaves those to Next). Unknown paths get the 404 handlers.
 */
export function resolveCustomerPath(pathname: string): { handlers: RouteHandlers; direct: Route['direct']; params: Record<string, string> } {
  const parts = pathname.slice(API_BASE.length).split('/').slice(1);
  for (const route of state().routes.values()) {
    if (route.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = route.segments.every((seg, i) => {
      if (seg.startsWith('{')) {
        params[seg.slice(1, -1)] = safeDecode(parts[i]!);
        return true;
      }
      return seg === parts[i];
    });
    if (ok) return { handlers: route.handlers, direct: route.direct, params };
  }
  return { handlers: state().unknown, direct: {}, params: {} };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
