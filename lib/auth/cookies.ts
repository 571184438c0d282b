/**
 * The dashboard's cookie names, the same over http and https (the `Secure` attribute follows the
 * request instead, see lib/auth/session.ts), so proxy.ts and the session reader agree.
 */
export const SESSION_COOKIE = 'next-auth.session-token';
export const CSRF_COOKIE = 'next-auth.csrf-token';
export const CALLBACK_COOKIE = 'next-auth.callback-url';
