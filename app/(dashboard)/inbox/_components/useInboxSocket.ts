'use client';
import { useEffect, useRef } from 'react';
import { io, type Socket } from 'socket.io-client';
import type { InboxServerEvent, InboxServerEvents } from '@/lib/inbox/protocol';

type Listeners = { [N in keyof InboxServerEvents]?: (payload: InboxServerEvents[N]) => void } & { connect?: () => void };

let shared: Socket | null = null;
/** Every server event, each passed to a page's listener: a Record, so the compiler names one left out. */
const SERVER_EVENTS: Record<InboxServerEvent, true> = { 'inbox:changed': true, 'inbox:message': true, 'inbox:typing': true, 'inbox:mail': true };

/**
 * The page's one `/inbox` connection (the session cookie authenticates it), opened by the
 * dashboard layout and kept while the page is open: it keeps the member available
 * (`dashboard_seen_at`) and serves the inbox pages. socket.io-client reconnects by itself after a drain.
 */
export function inboxSocket(): Socket {
  if (!shared) {
    shared = io('/inbox', { withCredentials: true });
    shared.on('session:revoked', () => window.location.assign('/login'));
  }
  return shared;
}

/** The shared socket with this component's listeners (the latest ones are called; removed on unmount). */
export function useInboxSocket(listeners: Listeners): React.RefObject<Socket | null> {
  const socket = useRef<Socket | null>(null);
  const latest = useRef(listeners);
  latest.current = listeners;
  useEffect(() => {
    const s = inboxSocket();
    socket.current = s;
    const names = [...(Object.keys(SERVER_EVENTS) as InboxServerEvent[]), 'connect' as const];
    const handlers = names.map((name) => [name, (payload: unknown) => latest.current[name]?.(payload as never)] as const);
    for (const [name, fn] of handlers) s.on(name as string, fn);
    return () => {
      for (const [name, fn] of handlers) s.off(name as string, fn);
      socket.current = null;
    };
  }, []);
  return socket;
}

/** A request with its acknowledgement, as a promise of the reply. */
export function request<T>(socket: Socket | null, name: string, payload: object): Promise<T | null> {
  if (!socket?.connected) return Promise.resolve(null);
  return new Promise((resolve) => {
    socket.timeout(10_000).emit(name, payload, (err: Error | null, reply: { ok: boolean } & T) => resolve(err || !reply?.ok ? null : reply));
  });
}

export type Acted<T = object> = ({ ok: true } & T) | { ok: false; error: { code: string; message: string } };

/** A member action: its acknowledgement, or why it could not be sent (code `unavailable`: worth sending again). */
export function act<T = object>(socket: Socket | null, name: string, payload: object): Promise<Acted<T>> {
  if (!socket?.connected) return Promise.resolve({ ok: false, error: { code: 'unavailable', message: 'Not connected; reconnecting…' } });
  return new Promise((resolve) => {
    socket
      .timeout(15_000)
      .emit(name, payload, (err: Error | null, reply: Acted<T>) =>
        resolve(err ? { ok: false, error: { code: 'unavailable', message: 'No answer from the server; try again.' } } : reply),
      );
  });
}
