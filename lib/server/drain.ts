/**
 * The draining state of this process (CONTRACTS §9: on SIGTERM /readyz answers 503 at once).
 * Minimal version; the chatcore track owns the full drain. Kept on globalThis because server.ts
 * and Next's bundles hold separate copies of this module.
 */
const KEY = Symbol.for('svc.draining');
type Holder = { [KEY]?: boolean };

export function isDraining(): boolean {
  return (globalThis as Holder)[KEY] === true;
}

export function startDrain(): void {
  (globalThis as Holder)[KEY] = true;
}
