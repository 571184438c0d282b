/**
 * What the password step and the code step of signing in tell the page. next-auth hands a
 * Credentials error to the page only as `?error=` text, so the text is `<code>` or
 * `<code>:<ticket>`, and the page maps the code through this one table.
 */
export const SIGNIN_ERRORS = {
  two_factor_required: 'Enter the authentication code from your app (or a recovery code).',
  code_invalid: 'That code is not valid or was already used.',
  ticket_expired: 'Signing in took too long; start again with your password.',
  throttled: 'Too many failed sign-ins; wait 15 minutes and try again.',
} as const;

export type SignInErrorCode = keyof typeof SIGNIN_ERRORS;

export function signInError(code: SignInErrorCode, ticket?: string): Error {
  return new Error(ticket ? `${code}:${ticket}` : code);
}

/** The code and ticket in an `?error=` value, or null for anything else (a wrong password). */
export function parseSignInError(text: string | null | undefined): { code: SignInErrorCode; ticket: string | null } | null {
  if (!text) return null;
  const [code, ticket] = text.split(':', 2);
  return code && code in SIGNIN_ERRORS ? { code: code as SignInErrorCode, ticket: ticket ?? null } : null;
}
