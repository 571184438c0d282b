/**
 * Widget-service test helpers: widget clients through the same service the CLI uses, access
 * tokens from the real endpoint, and real socket.io clients (polling-only or websocket-only)
 * that send an Origin header the way a browser would. Every wait is bounded.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { io, type Socket } from 'socket.io-client';
import type { Ack, ServerEvent, SessionInfo } from '../../lib/chat/protocol';
import { createWidgetClient } from '../../lib/widget-clients/service';
import { addKnowledgeDocument } from '../../lib/knowledge/service';
import { api } from './builders';

export type Transport = 'polling' | 'websocket';
export const TRANSPORTS: Transport[] = ['polling', 'websocket'];

export type WidgetClient = { client_id: string; client_secret: string; domains: string[]; channel_id: number };

export async function createTestWidgetClient(accountId: number, domains: string[] = ['example.com'], channelId?: number): Promise<WidgetClient> {
  return createWidgetClient(CLI, { accountId, domains, channelId });
}

export async function addKnowledge(accountId: number, filename: string, text: string) {
  return addKnowledgeDocument(accountId, filename, Buffer.from(text, 'utf8'));
}

/** POST /api/widget/token with any body (a string is sent as is) and headers. */
export async function tokenRequest(baseUrl: string, body: unknown, headers: Record<string, string> = {}) {
  return api(baseUrl)('/api/widget/token', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export type IssuedToken = { access_token: string; token_type: string; expires_in: number; visitor_id: string };

/** A token from the integrator's backend (client secret); `visitor_id` continues a visitor. */
export async function backendToken(baseUrl: string, client: WidgetClient, visitorId?: string): Promise<IssuedToken> {
  const res = await tokenRequest(baseUrl, {
    client_id: client.client_id,
    client_secret: client.client_secret,
    ...(visitorId ? { visitor_id: visitorId } : {}),
  });
  assert.equal(res.status, 200, `token request failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as IssuedToken;
}

export type SocketOptions = {
  transport?: Transport;
  /** Sent as the Origin header; null sends none. */
  origin?: string | null;
  /** The handshake auth object; undefined sends none. */
  auth?: Record<string, unknown>;
  query?: Record<string, string>;
  /** More handshake headers (X-Forwarded-For under TRUST_PROXY, …). */
  headers?: Record<string, string>;
};

/** A socket.io client for the /widget namespace that never reconnects by itself. */
export function widgetSocket(baseUrl: string, opts: SocketOptions): Socket {
  return io(`${baseUrl}/widget`, {
    transports: [opts.transport ?? 'websocket'],
    upgrade: false,
    forceNew: true,
    reconnection: false,
    timeout: 5000,
    extraHeaders: { ...opts.headers, ...(opts.origin == null ? {} : { origin: opts.origin }) },
    ...(opts.auth !== undefined ? { auth: opts.auth } : {}),
    ...(opts.query ? { query: opts.query } : {}),
  });
}

/** How a connection attempt ended: accepted, or refused with the connect_error message and its code (`data.code`). */
export function connectOutcome(socket: Socket, timeoutMs = 5000): Promise<{ connected: true } | { connected: false; message: string; code?: string }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ connected: false, message: `no answer within ${timeoutMs} ms` }), timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve({ connected: true });
    });
    socket.once('connect_error', (e: Error & { data?: { code?: string } }) => {
      clearTimeout(timer);
      resolve({ connected: false, message: e.message, code: e.data?.code });
    });
  });
}

/** Connects and returns the connect_error message; fails if the connection was accepted. */
export async function expectRefused(baseUrl: string, opts: SocketOptions): Promise<string> {
  const socket = widgetSocket(baseUrl, opts);
  try {
    const outcome = await connectOutcome(socket);
    assert.equal(outcome.connected, false, 'the connection was accepted but must be refused');
    return (outcome as { message: string }).message;
  } finally {
    socket.close();
  }
}

type Waiter = { check: () => boolean; resolve: () => void };

/** One connected widget: collects every pushed event and answers requests with their acks. */
export class Visitor {
  readonly events: ServerEvent[] = [];
  session: SessionInfo | undefined;
  expired: { code?: string; message: string } | undefined;
  disconnectReason: string | undefined;
  private waiters = new Set<Waiter>();

  constructor(readonly socket: Socket) {
    socket.on('event', (e: ServerEvent) => {
      this.events.push(e);
      this.poke();
    });
    socket.on('session', (s: SessionInfo) => {
      this.session = s;
      this.poke();
    });
    socket.on('session:expired', (m: { code?: string; message: string }) => {
      this.expired = m;
      this.poke();
    });
    socket.on('disconnect', (reason: string) => {
      this.disconnectReason = reason;
      this.poke();
    });
  }

  private poke() {
    for (const w of this.waiters)
      if (w.check()) {
        this.waiters.delete(w);
        w.resolve();
      }
  }

  /** Resolves when `check` holds; rejects after `timeoutMs` with `what` in the message. */
  until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; events: ${JSON.stringify(this.events.map((e) => [e.seq, e.type]))}`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Sends a request and returns its acknowledgement. */
  async request<T = Record<string, unknown>>(name: string, payload: unknown, timeoutMs = 10_000): Promise<Ack<T>> {
    return this.socket.timeout(timeoutMs).emitWithAck(name, payload) as Promise<Ack<T>>;
  }

  /** Sends a request that must succeed and returns its acknowledgement. */
  async ok<T = Record<string, any>>(name: string, payload: unknown, timeoutMs = 10_000): Promise<T & { ok: true }> {
    const ack = await this.request<T>(name, payload, timeoutMs);
    assert.equal(ack.ok, true, `${name} failed: ${JSON.stringify(ack)}`);
    return ack as T & { ok: true };
  }

  eventsOf(responseId: string): ServerEvent[] {
    return this.events.filter((e) => 'response_id' in e && e.response_id === responseId);
  }

  /** The answer.done or answer.error of a response, once it arrived. */
  async finished(responseId: string, timeoutMs = 10_000): Promise<ServerEvent> {
    const end = () => this.events.find((e) => 'response_id' in e && e.response_id === responseId && (e.type === 'answer.done' || e.type === 'answer.error'));
    await this.until(() => end() !== undefined, `the end of answer ${responseId}`, timeoutMs);
    return end()!;
  }

  close() {
    this.socket.close();
  }
}

/** Opens an accepted connection and waits for its `session` message. */
export async function connectVisitor(baseUrl: string, token: string, origin: string | null, transport: Transport = 'websocket'): Promise<Visitor> {
  const socket = widgetSocket(baseUrl, { transport, origin, auth: { token } });
  const visitor = new Visitor(socket);
  const outcome = await connectOutcome(socket);
  if (!outcome.connected) {
    socket.close();
    assert.fail(`connection refused: ${outcome.message}`);
  }
  try {
    await visitor.until(() => visitor.session !== undefined, 'the session message', 5000);
  } catch (e) {
    socket.close();
    throw e;
  }
  return visitor;
}

/** Asserts that events carry strictly increasing seqs. */
export function assertIncreasingSeq(events: ServerEvent[]) {
  for (let i = 1; i < events.length; i++) {
    assert.ok(events[i]!.seq > events[i - 1]!.seq, `seq not increasing at ${i}: ${JSON.stringify(events.map((e) => e.seq))}`);
  }
}

/** Multipart POST /api/widget/uploads with one file (or none) and an optional bearer token. */
export async function upload(baseUrl: string, token: string | null, files: Array<{ name: string; data: Buffer; type?: string }>) {
  const form = new FormData();
  for (const f of files) form.append('file', new Blob([new Uint8Array(f.data)], { type: f.type ?? 'application/octet-stream' }), f.name);
  return api(baseUrl)('/api/widget/uploads', {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: form,
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a value that passes `ok`, or fails after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  do {
    last = await fn();
    if (ok(last)) return last;
    await sleep(50);
  } while (Date.now() < deadline);
  assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
}
