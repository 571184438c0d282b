import { processSingleton } from './process';
/**
 * Whether this instance is draining (SIGTERM, docs/contracts.md §9). One flag per process, shared through
 * globalThis because server.ts and Next's bundles hold separate copies of this module: /readyz
 * reads it, the socket server refuses new connections and asks and moves widgets elsewhere.
 */
type State = { draining: boolean; listeners: Set<() => void> };

function state(): State {
  return processSingleton('svc.drain', (): State => ({ draining: false, listeners: new Set() }));
}

export function isDraining(): boolean {
  return state().draining;
}

/** Starts draining (idempotent) and tells every listener once. */
export function startDrain(): void {
  const s = state();
  if (s.draining) return;
  s.draining = true;
  for (const fn of s.listeners) {
    try {
      fn();
    } catch (e) {
      console.error('drain listener failed:', e);
    }
  }
}

/** Runs `fn` when the drain starts (at once if it already has); returns an unsubscribe function. */
export function onDrain(fn: () => void): () => void {
  const s = state();
  if (s.draining) {
    fn();
    return () => {};
  }
  s.listeners.add(fn);
  return () => s.listeners.delete(fn);
}

/** Tests run several servers in one process: forget a finished drain. */
export function resetDrain(): void {
  const s = state();
  s.draining = false;
  s.listeners.clear();
}
