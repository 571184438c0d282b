/**
 * A background loop's pause that a wake-up ends early: `idle(ms)` resolves after `ms`, at the next
 * `wake()`, or at once when a wake-up came since the last pause or the loop is stopping (so work
 * committed while the loop was busy is never waited out).
 */
export function wakeablePause(stopping: () => boolean): { wake: () => void; idle: (ms: number) => Promise<void> } {
  let wakeUp: (() => void) | null = null;
  let woken = false;
  return {
    wake: () => {
      woken = true;
      wakeUp?.();
    },
    idle: (ms) =>
      new Promise<void>((resolve) => {
        if (woken || stopping()) {
          woken = false;
          resolve();
          return;
        }
        const timer = setTimeout(done, ms);
        timer.unref();
        function done() {
          clearTimeout(timer);
          wakeUp = null;
          woken = false;
          resolve();
        }
        wakeUp = done;
      }),
  };
}
