import net from 'node:net';
import os from 'node:os';
import type { Sql } from 'postgres';
import { getLogger } from '../lib/core/logger';
import { processSingleton } from '../lib/core/process';

/** One server of a multi-host connection string. */
export type HostAddress = { host: string; port: number };

/** What a probe found: writable primary, read-only standby (or read-only primary), or no answer. */
export type HostState = 'writable' | 'read-only' | 'down';

const PROBE_EVERY_MS = 5000;
const PROBE_TIMEOUT_MS = 3000;
/** While connections wait for a primary (a promotion under way), probes come this often. */
const PROBE_WAITING_MS = 250;

/** The hosts of a libpq-style URL (`postgres://u:p@h1:5432,h2:5433/db`), in order; `[::1]:5432` allowed. */
export function parseHosts(url: string): HostAddress[] {
  const rest = url.replace(/^[a-z]+:\/\//i, '');
  const authority = rest.split(/[/?]/, 1)[0] ?? '';
  const hostPart = authority.slice(authority.lastIndexOf('@') + 1);
  if (!hostPart) return [];
  return hostPart.split(',').map((h) => {
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h);
    return { host: (m?.[1] ?? h).replace(/^\[|\]$/g, ''), port: m?.[2] ? Number(m[2]) : 5432 };
  });
}

/**
 * The host writes go to, given every host's state: the current one while it stays writable (two
 * writable hosts is a split brain an operator must end, not a reason to move), else the first
 * writable one; null when none is.
 */
export function choosePrimary(states: readonly HostState[], current: number | null): { primary: number | null; conflict: boolean } {
  const writable = states.flatMap((s, i) => (s === 'writable' ? [i] : []));
  const conflict = writable.length > 1;
  if (current !== null && states[current] === 'writable') return { primary: current, conflict };
  return { primary: writable[0] ?? null, conflict };
}

/** A probe's application_name in pg_stat_activity. */
export function probeApplicationName(): string {
  return `svc probe ${os.hostname()} ${process.pid}`.slice(0, 63);
}

type Probe = (index: number) => Promise<HostState>;

/**
 * Watches which of several hosts is the writable primary: probes every host every 5 s and at once
 * when a connection fails; the pool dials only the primary, and its connections to any other host
 * are dropped when the primary moves (a promoted standby, an old primary back as read-only).
 */
export class HostWatch {
  primary: number | null = null;
  states: HostState[];
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private waiters: Array<() => void> = [];
  private moved = new Set<(primary: number | null) => void>();

  constructor(
    readonly hosts: readonly HostAddress[],
    private readonly probe: Probe,
  ) {
    this.states = hosts.map(() => 'down');
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.probeNow(), PROBE_EVERY_MS);
    this.timer.unref();
    void this.probeNow();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Calls `fn` with the new primary's index each time it changes. */
  onMove(fn: (primary: number | null) => void): () => void {
    this.moved.add(fn);
    return () => this.moved.delete(fn);
  }

  /** One probe round of every host; concurrent callers share it. */
  probeNow(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** The primary's index, once one answers writable (rejects after `timeoutMs`). */
  async writable(timeoutMs = Number.POSITIVE_INFINITY): Promise<number> {
    if (this.primary !== null) return this.primary;
    this.start();
    void this.probeNow();
    let timer: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.waiters.push(resolve);
        if (Number.isFinite(timeoutMs)) {
          timer = setTimeout(() => {
            this.waiters = this.waiters.filter((w) => w !== resolve);
            reject(Object.assign(new Error('No writable database host answers.'), { code: 'ECONNREFUSED' }));
          }, timeoutMs);
        }
      });
    } finally {
      clearTimeout(timer);
    }
    if (this.primary === null) return this.writable(timeoutMs);
    return this.primary;
  }

  private async round(): Promise<void> {
    this.states = await Promise.all(this.hosts.map((_, i) => this.probe(i).catch((): HostState => 'down')));
    const { primary, conflict } = choosePrimary(this.states, this.primary);
    if (conflict) {
      const writable = this.hosts.filter((_, i) => this.states[i] === 'writable').map((h) => `${h.host}:${h.port}`);
      getLogger().error({ writable }, 'several database hosts accept writes: end the split brain (writes go to the current primary)');
    }
    if (primary !== this.primary) {
      const from = this.primary === null ? null : this.hosts[this.primary];
      const to = primary === null ? null : this.hosts[primary];
      this.primary = primary;
      (primary === null ? getLogger().warn : getLogger().info).call(getLogger(), { from, to }, 'database primary moved');
      for (const fn of this.moved) fn(primary);
    }
    if (primary !== null) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    } else if (this.waiters.length > 0 && this.timer) {
      setTimeout(() => void this.probeNow(), PROBE_WAITING_MS).unref();
    }
  }
}

/** Asks one host whether it takes writes, on a connection of its own (never the pool's). */
export function sqlProbe(url: string, hosts: readonly HostAddress[]): { probe: Probe; end: () => Promise<void> } {
  const clients = new Map<number, Sql>();
  const client = async (i: number): Promise<Sql> => {
    let c = clients.get(i);
    if (!c) {
      const { default: postgres } = await import('postgres');
      const h = hosts[i]!;
      c = postgres(url, {
        host: h.host,
        port: h.port,
        max: 1,
        connect_timeout: PROBE_TIMEOUT_MS / 1000,
        idle_timeout: 0,
        prepare: false,
        fetch_types: false,
        onnotice: () => {},
        target_session_attrs: undefined,
        connection: { application_name: probeApplicationName() },
      });
      clients.set(i, c);
    }
    return c;
  };
  const probe: Probe = async (i) => {
    const c = await client(i);
    let timer: NodeJS.Timeout | undefined;
    try {
      const [row] = await Promise.race([
        c<{ recovery: boolean; ro: string }[]>`select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') as ro`,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS);
        }),
      ]);
      return row && !row.recovery && row.ro === 'off' ? 'writable' : 'read-only';
    } catch {
      // A hung or lost connection is started afresh next round.
      clients.delete(i);
      void c.end({ timeout: 0 }).catch(() => {});
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    probe,
    end: async () => {
      await Promise.all([...clients.values()].map((c) => c.end({ timeout: 1 }).catch(() => {})));
      clients.clear();
    },
  };
}

/** This process's watch of a multi-host DATABASE_URL (null for a single host: the driver dials it). */
export function hostWatch(url: string): HostWatch | null {
  const hosts = parseHosts(url);
  if (hosts.length < 2) return null;
  const open = watches();
  let entry = open.get(url);
  if (!entry) {
    const { probe, end } = sqlProbe(url, hosts);
    entry = { watch: new HostWatch(hosts, probe), end };
    entry.watch.start();
    open.set(url, entry);
  }
  return entry.watch;
}

const watches = () => processSingleton('svc.database.hosts', () => new Map<string, { watch: HostWatch; end: () => Promise<void> }>());

/** Stops every watch and closes its probe connections (with the database: they would keep a CLI process alive). */
export async function closeHostWatches(): Promise<void> {
  const open = watches();
  const entries = [...open.values()];
  open.clear();
  for (const e of entries) e.watch.stop();
  await Promise.all(entries.map((e) => e.end()));
}

/**
 * Opens a socket to the watch's primary for the driver's `socket` option, waiting up to
 * `waitMs` for one; the socket is destroyed when the primary moves elsewhere, and its failure
 * starts a probe.
 */
export function dialPrimary(watch: HostWatch, waitMs: number): () => Promise<net.Socket> {
  const open = new Map<net.Socket, number>();
  watch.onMove((primary) => {
    for (const [socket, i] of open) {
      if (i === primary) continue;
      open.delete(socket);
      socket.destroy();
    }
  });
  return async () => {
    const i = await watch.writable(waitMs);
    const { host, port } = watch.hosts[i]!;
    const socket = net.connect(port, host);
    open.set(socket, i);
    socket.once('close', () => {
      // Closed by the server or the network (ours are removed first): is the primary still there?
      if (open.delete(socket)) void watch.probeNow();
    });
    return socket;
  };
}
