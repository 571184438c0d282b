import { z } from 'zod';

/** A UUID in its 8-4-4-4-12 hex form, either case (ids are stored lower-case). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_PATTERN.test(value);

/** A UUID string, lower-cased: the one zod form every request and import schema uses. */
export const uuidString = (message = 'must be a UUID') =>
  z
    .string()
    .regex(UUID_PATTERN, message)
    .transform((s) => s.toLowerCase());

export type IssueParam = { param: string; message: string };

/**
 * The one formatter of zod issues: each issue named by the field it is about. `path: 'field'`
 * names the top-level field (mapped through `names`, the spelling the caller used), `'full'` the
 * dotted path; an issue about the whole value gets `fallback`.
 */
export function issueParams(error: z.ZodError, opts: { names?: Record<string, string>; path?: 'field' | 'full'; fallback?: string } = {}): IssueParam[] {
  const { names = {}, path = 'field', fallback = 'input' } = opts;
  return error.issues.map((issue) => {
    const key = (path === 'full' ? issue.path.join('.') : String(issue.path[0] ?? '')) || fallback;
    return { param: names[key] ?? key, message: issue.message };
  });
}

/** "field: message" per issue (just the message when it names no field), joined. */
export function describeIssues(params: IssueParam[], separator = '; '): string {
  return params.map((p) => (p.param ? `${p.param}: ${p.message}` : p.message)).join(separator);
}
