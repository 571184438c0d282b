'use client';
import { useEffect, useRef } from 'react';
import { io, type Socket } from 'socket.io-client';

// biome-ignore lint/suspicious/noExplicitAny: each event's payload is typed by its listener
type Listeners = Partial<Record<'inbox:changed' | 'inbox:message' | 'inbox:typing' | 'connect', (payload: any) => void>>;

/**
 * One `/inbox` connection for the page (the session cookie authenticates it); the latest
 * listeners are called without reconnecting. socket.io-client reconnects by itself after a drain.
 */
export function useInboxSocket(listeners: Listeners): React.RefObject<Socket | null> {
  const socket = useRef<Socket | null>(null);
  const latest = useRef(listeners);
  latest.current = listeners;
  useEffect(() => {
    const s = io('/inbox', { withCredentials: true });
    socket.current = s;
    for (const name of ['inbox:changed', 'inbox:message', 'inbox:typing', 'connect'] as const) {
      s.on(name as string, (payload: unknown) => latest.current[name]?.(payload));
    }
    s.on('session:revoked', () => window.location.assign('/login'));
    return () => {
      s.close();
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

export type Acted = { ok: true } | { ok: false; error: { code: string; message: string } };

/** A member action: its acknowledgement, or why it could not be sent. */
export function act(socket: Socket | null, name: string, payload: object): Promise<Acted> {
  if (!socket?.connected) return Promise.resolve({ ok: false, error: { code: 'unavailable', message: 'Not connected; reconnecting…' } });
  return new Promise((resolve) => {
    socket
      .timeout(15_000)
      .emit(name, payload, (err: Error | null, reply: Acted) =>
        resolve(err ? { ok: false, error: { code: 'unavailable', message: 'No answer from the server; try again.' } } : reply),
      );
  });
}
