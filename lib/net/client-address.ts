import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import { getEnv } from '../env';
import { processSlot } from '../core/process';

/**
 * Who is on the other end of a request (docs/contracts.md §9 TRUST_PROXY). Unset: the socket peer and the
 * socket's protocol, whatever the headers say. A hop count (`1`) or a comma-separated list of
 * CIDRs / proxy-addr names (`10.0.0.0/8, loopback`): X-Forwarded-For and X-Forwarded-Proto are
 * believed as far as they were written by those proxies, and from nowhere else.
 */
export type ClientAddress = { ip: string; protocol: 'http' | 'https' };
type Trust = (addr: string, hop: number) => boolean;

const NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** Parses a TRUST_PROXY value; throws a message naming the variable for a bad one. */
export function parseTrustProxy(value: string | undefined): Trust | null {
  const v = value?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops < 1 || hops > 32) throw new Error('Invalid environment: TRUST_PROXY: a hop count must be 1–32');
    return (_addr, hop) => hop < hops;
  }
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of list) {
    if (NAMES.has(item)) continue;
    const [ip, bits, extra] = item.split('/');
    if (extra !== undefined || !ip || !ipaddr.isValid(ip) || (bits !== undefined && !/^\d{1,3}$/.test(bits))) {
      throw new Error(`Invalid environment: TRUST_PROXY: "${item}" is not an IP address, a CIDR, loopback, linklocal or uniquelocal`);
    }
  }
  try {
    return proxyaddr.compile(list);
  } catch (e) {
    throw new Error(`Invalid environment: TRUST_PROXY: ${(e as Error).message}`);
  }
}

const parsedTrust = processSlot<{ value: string | undefined; fn: Trust | null }>('svc.trustProxy');
function trust(): Trust | null {
  const value = getEnv().TRUST_PROXY;
  let held = parsedTrust.get();
  if (!held || held.value !== value) parsedTrust.set((held = { value, fn: parseTrustProxy(value) }));
  return held.fn;
}

/** Fails fast at start-up on a bad TRUST_PROXY (called by the server before it listens). */
export function checkTrustProxy(): void {
  trust();
}

function normalize(ip: string): string {
  try {
    const a = ipaddr.parse(ip);
    return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address().toString() : a.toString();
  } catch {
    return ip;
  }
}

/**
 * Without TRUST_PROXY the answer depends on the socket alone, so it is worked out once per
 * connection (keep-alive clients send many requests on one; parsing the address was a few µs of
 * every request in a profile). Per process and per socket: nothing another instance shares.
 */
const bySocket = new WeakMap<object, { peer: string; address: ClientAddress }>();
function peerAddressOf(socket: object, peer: string, protocol: 'http' | 'https'): ClientAddress {
  let known = bySocket.get(socket);
  if (known === undefined || known.peer !== peer || known.address.protocol !== protocol) {
    known = { peer, address: Object.freeze({ ip: normalize(peer), protocol }) };
    bySocket.set(socket, known);
  }
  return known.address;
}

/** The client address and protocol of a Node request (HTTP requests and socket.io handshakes alike). */
export function clientAddressOf(req: IncomingMessage): ClientAddress {
  return clientAddressWith(req, trust());
}

/** clientAddressOf under an explicit TRUST_PROXY rule (parseTrustProxy's result). */
export function clientAddressWith(req: IncomingMessage, fn: Trust | null): ClientAddress {
  const socketProto = (req.socket as TLSSocket | undefined)?.encrypted ? 'https' : 'http';
  const peer = req.socket?.remoteAddress;
  if (!peer) return { ip: 'unknown', protocol: socketProto };
  if (!fn) return peerAddressOf(req.socket, peer, socketProto);
  // proxyaddr.all: [peer, then X-Forwarded-For right to left] up to the first untrusted hop.
  const chain = proxyaddr.all(req, fn);
  const ip = normalize(chain[chain.length - 1] ?? peer);
  const trustedHops = chain.length - 1;
  let protocol: 'http' | 'https' = socketProto;
  if (trustedHops > 0 && socketProto === 'http') {
    // Each trusted proxy either overwrote X-Forwarded-Proto or appended to it; the entry written by
    // the outermost trusted proxy is `trustedHops` from the right (or the only one).
    const header = req.headers['x-forwarded-proto'];
    const entries = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    const entry = entries.length <= 1 ? entries[0] : entries[Math.max(0, entries.length - trustedHops)];
    if (entry === 'https' || entry === 'http') protocol = entry;
  }
  return { ip, protocol };
}

/**
 * The key a per-address limit counts against: an IPv4 address as is, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, so per-address limits would otherwise be free to reset).
 */
export function addressLimitKey(ip: string): string {
  try {
    const a = ipaddr.parse(ip);
    if (a.kind() === 'ipv4') return a.toString();
    const v6 = a as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    const parts = v6.parts.slice(0, 4).map((p) => p.toString(16));
    return `${parts.join(':')}::/64`;
  } catch {
    return ip;
  }
}

/** Stamps the trusted address and protocol on a request for route handlers (overwriting anything a client sent). */
export const PEER_IP_HEADER = 'x-svc-peer-ip';
export const PEER_PROTO_HEADER = 'x-svc-peer-proto';
export function stampClientAddress(req: IncomingMessage): ClientAddress {
  const addr = clientAddressOf(req);
  req.headers[PEER_IP_HEADER] = addr.ip;
  req.headers[PEER_PROTO_HEADER] = addr.protocol;
  return addr;
}
