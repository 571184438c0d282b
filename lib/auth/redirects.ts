/**
 * Where to go after signing in: only a path of this site. The value is parsed the way a browser
 * parses it (WHATWG URL: `\` is `/`, tabs and newlines are dropped), so `/\evil.example`,
 * `/\t/evil.example` and `//evil.example` are recognised as other hosts and refused. Returns the
 * normalised path (percent-encoded, never starting with `//`), or `/`.
 */
const PROBE = 'http://svc.invalid';

export function safeCallbackPath(value: unknown, ownHost?: string | null): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return '/';
  let u: URL;
  try {
    u = new URL(value, `${PROBE}/`);
  } catch {
    return '/';
  }
  const sameSite =
    u.origin === PROBE || (!!ownHost && (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && u.host === ownHost.toLowerCase());
  if (!sameSite) return '/';
  const path = `${u.pathname}${u.search}${u.hash}`;
  return path.startsWith('/') && !path.startsWith('//') && !path.startsWith('/\\') ? path : '/';
}
