import { onDrain } from './drain';
import { wakeablePause } from './pause';
import { processSlot } from './process';

/** A running background loop: `stopping` once stop() or the drain began; `wake()` ends its pause early. */
export type BackgroundLoop = {
  readonly stopping: boolean;
  wake: () => void;
  /** Claims nothing more: ends the pause, waits for the current step, leaves the drain. */
  stop: () => Promise<void>;
};

/**
 * The loop of an outbox worker every instance runs (mail, webhooks): `step` until stopped or
 * draining, pausing `pollMs` between steps unless `step` says more is due at once (true). A step
 * that throws (the database away) is reported once by `onDown`, then retried with a backoff up to
 * 15 s; `onUp` is told when a step succeeds again. It never throws.
 */
export type LoopOptions = {
  pollMs: number;
  step: (loop: BackgroundLoop) => Promise<boolean | undefined>;
  onDown: (e: unknown) => void;
  onUp?: () => void;
};

export function startBackgroundLoop(o: LoopOptions): BackgroundLoop {
  let stopping = false;
  let done: Promise<void> = Promise.resolve();
  const pause = wakeablePause(() => stopping);
  const halt = () => {
    stopping = true;
    pause.wake();
  };
  // Draining: claim nothing more; what is in flight finishes (the worker's stop waits for it).
  const unsubscribeDrain = onDrain(halt);
  const loop: BackgroundLoop = {
    get stopping() {
      return stopping;
    },
    wake: pause.wake,
    stop: async () => {
      halt();
      await done;
      unsubscribeDrain();
    },
  };
  // The first step runs after this returns, so a worker can keep the handle before its step reads it.
  done = Promise.resolve().then(async () => {
    let failures = 0;
    while (!stopping) {
      try {
        const more = await o.step(loop);
        if (failures > 0) o.onUp?.();
        failures = 0;
        if (!more) await pause.idle(o.pollMs);
      } catch (e) {
        if (failures === 0) o.onDown(e);
        failures++;
        await pause.idle(Math.min(o.pollMs * 2 ** Math.min(failures, 4), 15_000));
      }
    }
  });
  return loop;
}

/**
 * A background loop the process runs at most one of, held in the process slot `name`: `start`
 * does nothing while one runs; `stop` waits for it to finish its step, then forgets it.
 */
export function processLoop(name: string) {
  const slot = processSlot<BackgroundLoop>(name);
  return {
    start(o: LoopOptions): void {
      if (!slot.get()) slot.set(startBackgroundLoop(o));
    },
    async stop(): Promise<void> {
      const loop = slot.get();
      if (!loop) return;
      await loop.stop();
      slot.clear();
    },
    /** Ends the running loop's pause (work arrived); nothing when it is not running. */
    wake(): void {
      slot.get()?.wake();
    },
  };
}

/**
 * Records what happened to an item a worker sent (a mail, a webhook delivery), retrying while the
 * database is away for up to `withinMs`, which is less than the item's lease: once the lease lapses
 * another instance sends the item again. False when the outcome could not be recorded in time.
 */
export async function recordOutcomeWithin(withinMs: number, record: () => Promise<void>, onRetry: (e: unknown) => void): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (let attempt = 0; ; attempt++) {
    try {
      await record();
      return true;
    } catch (e) {
      if (Date.now() > deadline) return false;
      if (attempt === 0) onRetry(e);
      await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 2000)));
    }
  }
}
