import { dashboardUrl } from './session-secret';

/**
 * A browser always sends Origin: a handshake from another site's page (which would carry the
 * member's cookie) is refused. Allowed: the dashboard's address, or the address the request came to.
 */
export function isOwnOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true; // not a browser: no ambient cookie to abuse
  try {
    const o = new URL(origin);
    if (o.origin === new URL(dashboardUrl('/')).origin) return true;
    // A proxy that forwards `Host $host` drops the port: then the host name alone must match.
    return !!host && (o.host === host || (!host.includes(':') && o.hostname === host));
  } catch {
    return false;
  }
}
