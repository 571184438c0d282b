/**
 * Per-process state. server.ts and Next's bundles each hold their own copy of every module, so a
 * value the whole process must share lives on globalThis under a `Symbol.for(name)` key: every
 * copy finds the same one. Per process by nature (a pool, a socket registry, this process's
 * counters); what every instance must agree on belongs in PostgreSQL or Redis instead.
 */
type Global = { [key: symbol]: unknown };

/** A named slot on globalThis: read, set or clear the process's one value. */
export function processSlot<T>(name: string) {
  const key = Symbol.for(name);
  const g = globalThis as Global;
  return {
    get: (): T | undefined => g[key] as T | undefined,
    set: (value: T): void => {
      g[key] = value;
    },
    clear: (): void => {
      delete g[key];
    },
  };
}

/** The process's one value under `name`, created by `create` on first use. */
export function processSingleton<T>(name: string, create: () => T): T {
  const g = globalThis as Global;
  const key = Symbol.for(name);
  return (g[key] ??= create()) as T;
}
