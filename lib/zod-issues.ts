import type { z } from 'zod';

/*
 * The one formatter of zod issues, below every layer (it imports only zod's types): lib/env.ts
 * uses it too, and lib/core reads lib/env.
 */

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
