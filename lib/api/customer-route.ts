import { authenticateCustomerRequest, type CustomerPrincipal } from '../auth/customer-api';
import { AppError } from './errors';
import { apiRoute, jsonResponse } from './handler';
import { validate } from '../accounts/service';
import type { z } from 'zod';

/**
 * A Customer API read: authenticate (key or dashboard session), then one service call whose value
 * is the JSON body. Everything the route files repeat lives here.
 */
export function customerGet<P>(fn: (principal: CustomerPrincipal, params: P, query: URLSearchParams) => Promise<unknown>) {
  return apiRoute<P>(async (req, params) => {
    const principal = await authenticateCustomerRequest(req);
    return jsonResponse(await fn(principal, params, new URL(req.url).searchParams));
  });
}

/** Path ids that are not UUIDs are 404s, exactly like unknown ids (CONTRACTS §4). */
export function pathId<T extends z.ZodType>(schema: T, params: unknown, what: string): z.infer<T> {
  try {
    return validate(schema, params);
  } catch {
    const value = Object.values(params as Record<string, string>)[0];
    throw new AppError('not_found', `No ${what} with id ${String(value).slice(0, 100)}.`);
  }
}

/** Single-record reads accept only format=gridjs. */
export function singleFormat(query: URLSearchParams): 'gridjs' | undefined {
  const value = query.getAll('format').find((v) => v !== '');
  if (value === undefined) return undefined;
  if (value !== 'gridjs') {
    throw new AppError('invalid_parameters', "format: must be 'gridjs' (or left out)", {
      errors: [{ param: 'format', message: "must be 'gridjs' (or left out)" }],
    });
  }
  return 'gridjs';
}
