import type { ServerEvent } from './protocol';

type Draft = ServerEvent extends infer E ? (E extends ServerEvent ? Omit<E, 'seq'> : never) : never;

export type Subscriber = { id: string; lastSent: number; send: (e: ServerEvent) => void };

const RECENT = 2000;

/**
 * The live side of one conversation in this process. Every emission (assign seq → persist when
 * asked → deliver) runs through one promise chain, so subscribers always see increasing seqs and
 * a resume can never interleave with a live event.
 */
export class ConversationStream {
  seq: number;
  readonly subscribers = new Map<string, Subscriber>();
  readonly inflight = new Map<string, { responseId: string }>();
  private recent: ServerEvent[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  lastActive = Date.now();

  constructor(readonly id: string, readonly accountId: number, lastSeq: number) {
    this.seq = lastSeq;
  }

  /** Runs `fn` in the stream's order; its failure is the caller's, never the chain's. */
  private serial<T>(fn: () => Promise<T> | T): Promise<T> {
    const run = this.chain.then(fn);
    this.chain = run.catch(() => {});
    this.lastActive = Date.now();
    return run;
  }

  emit(draft: Draft, persist?: (seq: number, event: ServerEvent) => Promise<unknown>): Promise<ServerEvent> {
    return this.serial(async () => {
      const seq = this.seq + 1;
      const event = { ...draft, seq } as ServerEvent;
      if (persist) await persist(seq, event);
      this.seq = seq;
      this.recent.push(event);
      if (this.recent.length > RECENT) this.recent.splice(0, this.recent.length - RECENT);
      for (const sub of this.subscribers.values()) deliver(sub, event);
      return event;
    });
  }

  /** Adds a subscriber, first sending it every event after `afterSeq` (stored ones from `loadStored`). */
  subscribe(sub: Subscriber, afterSeq: number | null, loadStored: (after: number) => Promise<ServerEvent[]>): Promise<number> {
    return this.serial(async () => {
      const existing = this.subscribers.get(sub.id);
      if (afterSeq === null) {
        if (!existing) { sub.lastSent = this.seq; this.subscribers.set(sub.id, sub); }
        return this.seq;
      }
      const target = existing ?? sub;
      const from = afterSeq;
      target.lastSent = from;
      const byseq = new Map<number, ServerEvent>();
      for (const e of await loadStored(from)) byseq.set(e.seq, e);
      for (const e of this.recent) if (e.seq > from) byseq.set(e.seq, e);
      for (const e of [...byseq.values()].sort((a, b) => a.seq - b.seq)) deliver(target, e);
      target.lastSent = Math.max(target.lastSent, this.seq);
      this.subscribers.set(target.id, target);
      return this.seq;
    });
  }

  unsubscribe(id: string) {
    this.subscribers.delete(id);
  }

  get idle(): boolean {
    return this.subscribers.size === 0 && this.inflight.size === 0;
  }
}

function deliver(sub: Subscriber, event: ServerEvent) {
  if (event.seq <= sub.lastSent) return;
  sub.lastSent = event.seq;
  sub.send(event);
}

/** Streams of this process, created on first use from the stored last_seq. */
export class StreamRegistry {
  private streams = new Map<string, Promise<ConversationStream>>();

  get(id: string, accountId: number, loadLastSeq: () => Promise<number>): Promise<ConversationStream> {
    let s = this.streams.get(id);
    if (!s) {
      s = loadLastSeq().then((seq) => new ConversationStream(id, accountId, seq));
      s.catch(() => this.streams.delete(id));
      this.streams.set(id, s);
    }
    return s;
  }

  peek(id: string): Promise<ConversationStream> | undefined {
    return this.streams.get(id);
  }

  /** Forgets idle streams (their state is all stored). */
  async sweep(maxIdleMs: number) {
    const now = Date.now();
    for (const [id, p] of this.streams) {
      const s = await p.catch(() => null);
      if (s && s.idle && now - s.lastActive > maxIdleMs) this.streams.delete(id);
    }
  }

  get size() { return this.streams.size; }
}
