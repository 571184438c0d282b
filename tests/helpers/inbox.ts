/** A member's `/inbox` socket for tests: connects with a dashboard session cookie and records what it receives. */
import assert from 'node:assert/strict';
import { io, type Socket } from 'socket.io-client';
import { connectOutcome, type Transport } from './widget';

export type InboxPush = { name: string; payload: Record<string, unknown> };
type Ack<T> = ({ ok: true } & T) | { ok: false; error: { code: string; message: string } };

/** A socket.io client for `/inbox` that never reconnects by itself; `cookie` null sends none. */
export function inboxSocket(baseUrl: string, cookie: string | null, transport: Transport = 'websocket', headers: Record<string, string> = {}): Socket {
  return io(`${baseUrl}/inbox`, {
    transports: [transport],
    upgrade: false,
    forceNew: true,
    reconnection: false,
    timeout: 5000,
    extraHeaders: { ...headers, ...(cookie ? { cookie } : {}) },
  });
}

export class InboxMember {
  readonly pushes: InboxPush[] = [];
  revoked: { code: string; message: string } | undefined;
  disconnected: string | undefined;

  constructor(readonly socket: Socket) {
    socket.onAny((name: string, payload: Record<string, unknown>) => {
      this.pushes.push({ name, payload });
      if (name === 'session:revoked') this.revoked = payload as { code: string; message: string };
    });
    socket.on('disconnect', (reason: string) => {
      this.disconnected = reason;
    });
  }

  of(name: string, conversationId?: string): InboxPush[] {
    return this.pushes.filter((p) => p.name === name && (conversationId === undefined || p.payload.conversation_id === conversationId));
  }

  /** Resolves when `check` holds; fails after `timeoutMs` with `what` and what arrived. */
  async until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; received: ${JSON.stringify(this.pushes.map((p) => p.name))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async request<T = Record<string, unknown>>(name: string, payload: unknown, timeoutMs = 10_000): Promise<Ack<T>> {
    return this.socket.timeout(timeoutMs).emitWithAck(name, payload) as Promise<Ack<T>>;
  }

  async ok<T = Record<string, unknown>>(name: string, payload: unknown): Promise<T & { ok: true }> {
    const ack = await this.request<T>(name, payload);
    assert.equal(ack.ok, true, `${name} failed: ${JSON.stringify(ack)}`);
    return ack as T & { ok: true };
  }

  close() {
    this.socket.close();
  }
}

/** An accepted `/inbox` connection of the member whose session cookie is given. */
export async function connectMember(baseUrl: string, cookie: string, transport: Transport = 'websocket'): Promise<InboxMember> {
  const socket = inboxSocket(baseUrl, cookie, transport);
  const member = new InboxMember(socket);
  const outcome = await connectOutcome(socket);
  if (!outcome.connected) {
    socket.close();
    assert.fail(`inbox connection refused: ${outcome.message}`);
  }
  return member;
}
