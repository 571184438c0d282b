/**
 * Registered widget domains (docs/contracts.md §6): a host name, or `*.example.com` for its subdomains
 * (not the apex). Any port matches; `localhost` only when registered. Deny by default.
 */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function normalizeDomain(input: string): string | null {
  let d = input.trim().toLowerCase();
  if (d.endsWith('.')) d = d.slice(0, -1);
  const wildcard = d.startsWith('*.');
  const host = wildcard ? d.slice(2) : d;
  if (!host || host.length > 253) return null;
  const labels = host.split('.');
  if (!labels.every((l) => LABEL.test(l))) return null;
  if (wildcard && labels.length < 2) return null;
  return wildcard ? `*.${host}` : host;
}

/** The host of an Origin header value, or null when it is missing, opaque or not http(s). */
export function originHost(origin: string | null | undefined): string | null {
  if (!origin || origin === 'null') return null;
  try {
    const u = new URL(origin);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return null;
    if (u.username || u.password || (u.pathname !== '/' && u.pathname !== '') || u.search || u.hash) return null;
    return u.hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
}

export function hostAllowed(host: string | null, domains: readonly string[]): boolean {
  if (!host) return false;
  return domains.some((d) => (d.startsWith('*.') ? host.endsWith(d.slice(1)) && host.length > d.length - 1 : host === d));
}
