import type { Db } from '../client';

/**
 * A cursor over pages read inside ONE `REPEATABLE READ, READ ONLY` transaction (docs/contracts.md §10):
 * every page sees the same snapshot, so rows written while an export runs neither appear nor
 * appear twice. `next()` asks the transaction for one more page (the caller's pace: the export
 * asks for one page ahead of its client); `close()` ends the transaction. On PGlite, one session: writers wait
 * until the export's transaction ends.
 */
export type SnapshotCursor<T> = { next: () => Promise<T[]>; close: () => Promise<void> };

function channel<T>() {
  const items: T[] = [];
  const waiters: Array<(v: T) => void> = [];
  return {
    put(v: T) {
      const w = waiters.shift();
      if (w) w(v);
      else items.push(v);
    },
    take(): Promise<T> {
      return items.length > 0 ? Promise.resolve(items.shift()!) : new Promise((r) => waiters.push(r));
    },
  };
}

/** `readPage(tx, previous page's last row or null)` → the next page (empty: no more). */
export function openSnapshotCursor<T>(db: Db, readPage: (tx: Db, last: T | null) => Promise<T[]>): SnapshotCursor<T> {
  const asks = channel<boolean>();
  const replies = channel<{ rows: T[] } | { error: unknown }>();
  let open = true;
  const done = db.transaction(
    async (tx) => {
      let last: T | null = null;
      while (await asks.take()) {
        const page = await readPage(tx as unknown as Db, last);
        if (page.length > 0) last = page[page.length - 1]!;
        replies.put({ rows: page });
      }
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  const ended = done.then(
    () => replies.put({ rows: [] }),
    (error: unknown) => replies.put({ error }),
  );
  return {
    async next() {
      if (!open) return [];
      asks.put(true);
      const reply = await replies.take();
      if ('error' in reply) {
        open = false;
        throw reply.error;
      }
      return reply.rows;
    },
    async close() {
      if (open) {
        open = false;
        asks.put(false);
      }
      await ended;
    },
  };
}
