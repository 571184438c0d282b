import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { getEnv } from '../env';

/**
 * SSRF guard for outbound URLs (docs/contracts.md §11, §16 outbound addresses): webhooks, website
 * imports and an account's model endpoint. Only public unicast
 * addresses are allowed: loopback, RFC 1918, fc00::/7, link-local (metadata services at
 * 169.254.169.254 and fd00:ec2::254 among them), CGNAT, unspecified, multicast and reserved are
 * refused. IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it reaches; the other
 * forms that embed an IPv4 address (IPv4-compatible ::/96, 6to4, Teredo, NAT64, SIIT) are refused
 * whatever they embed. Checked at creation and again before every attempt, on every address the
 * name resolves to; the request then connects to the checked address, so a DNS answer that
 * changes in between (rebinding) cannot reach a refused one.
 */

export class UnsafeAddressError extends Error {}

/** The longest outbound URL accepted. */
export const MAX_URL_CHARS = 2000;

/** The one refusal text (§16): what is refused, and the setting a self-hosted deployment may use. */
export const PRIVATE_REFUSED =
  'private, loopback, link-local and metadata addresses are refused ' + '(a self-hosted deployment can allow them with OUTBOUND_ALLOW_PRIVATE_NETWORKS=1)';

/** IPv4-compatible IPv6 (RFC 4291, deprecated): ::a.b.c.d, which ipaddr.js calls plain unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  uniqueLocal: 'a private (unique local)',
  linkLocal: 'a link-local',
  carrierGradeNat: 'a carrier-grade NAT',
  unspecified: 'an unspecified',
  multicast: 'a multicast',
  broadcast: 'a broadcast',
};

/** Why this address is refused, or null when it is a public unicast address. */
export function refusedAddressReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const range = ip.range();
  if (range === 'unicast' && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).match(IPV4_COMPATIBLE))
    return `${ip.toString()} is a reserved (IPv4-compatible) address`;
  return range === 'unicast' ? null : `${ip.toString()} is ${RANGE_NAMES[range] ?? `a reserved (${range})`} address`;
}

export type ParsedTarget = { url: URL; host: string; isLiteral: boolean };
export type CheckedAddress = { address: string; family: 4 | 6 };

/** The URL's syntax rules (http or https, no credentials, a host); throws UnsafeAddressError with the reason. */
export function parseOutboundUrl(raw: string): ParsedTarget {
  if (raw.length > MAX_URL_CHARS) throw new UnsafeAddressError(`must be at most ${MAX_URL_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeAddressError('must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeAddressError(`must use http or https, not ${url.protocol.slice(0, -1)}`);
  if (url.username || url.password) throw new UnsafeAddressError('must not contain a user name or password');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (!host) throw new UnsafeAddressError('must name a host');
  return { url, host, isLiteral: ipaddr.isValid(host) };
}

/**
 * The addresses to connect to for this URL, every one checked (all must pass: a name that also
 * resolves to a private address is refused as a whole). Throws UnsafeAddressError.
 */
export async function resolveOutboundTarget(target: ParsedTarget): Promise<CheckedAddress[]> {
  const env = getEnv();
  const allowPrivate = env.OUTBOUND_ALLOW_PRIVATE_NETWORKS || env.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
  let found: Array<{ address: string; family: number }>;
  if (target.isLiteral) {
    found = [{ address: target.host, family: ipaddr.parse(target.host).kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      found = await dns.lookup(target.host, { all: true, verbatim: true });
    } catch (e) {
      throw new UnsafeAddressError(`host ${target.host} does not resolve (${(e as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
    if (found.length === 0) throw new UnsafeAddressError(`host ${target.host} does not resolve`);
  }
  if (!allowPrivate) {
    for (const a of found) {
      const why = refusedAddressReason(a.address);
      // A name's answer is never echoed: it would map the internal network for whoever asks.
      if (why)
        throw new UnsafeAddressError(target.isLiteral ? `${why}; ${PRIVATE_REFUSED}` : `host ${target.host} resolves to a refused address; ${PRIVATE_REFUSED}`);
    }
  }
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

/** The URL parsed and resolved, every address checked; `address` is the one to connect to. Throws UnsafeAddressError. */
export async function resolveOutboundUrl(raw: string): Promise<{ url: URL; address: CheckedAddress }> {
  const target = parseOutboundUrl(raw);
  const [address] = (await resolveOutboundTarget(target)) as [CheckedAddress];
  return { url: target.url, address };
}

/**
 * An http(s) request to `url` that connects to the address just checked, whatever a second DNS
 * answer would say (so rebinding cannot reach a refused address); no agent, redirects not followed.
 * A null address (the operator's own settings, not an account's) resolves as usual.
 */
export function requestChecked(
  url: URL,
  address: CheckedAddress | null,
  options: Pick<http.RequestOptions, 'method' | 'headers' | 'signal'>,
  onResponse: (res: http.IncomingMessage) => void,
): http.ClientRequest {
  const lookup: LookupFunction | undefined = address
    ? (_host, o, cb) => {
        if ((o as { all?: boolean }).all) (cb as unknown as (e: null, a: CheckedAddress[]) => void)(null, [address]);
        else cb(null, address.address, address.family);
      }
    : undefined;
  return (url.protocol === 'https:' ? https : http).request(
    {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      ...(lookup ? { lookup } : {}),
      agent: false,
      ...options,
    },
    onResponse,
  );
}
