import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { countPoolConnections } from '../../db/queries/health';
import { databaseCounts, getDatabase, poolApplicationName } from '../../db/client';
import { readState } from '../../db/read';
import { getEnv } from '../env';
import { refusalCounts } from '../limits/limiter';
import { isDraining } from '../core/drain';
import { processSingleton } from '../core/process';

/**
 * The process's Prometheus metrics (docs/contracts.md §9). One registry per process, kept on globalThis:
 * server.ts and Next's bundles hold separate copies of this module and must feed the same one.
 * Call sites use the small functions of `metrics`; GET /metrics renders `renderMetrics()`.
 */
type State = {
  registry: Registry;
  http: Histogram<'method' | 'route' | 'status'>;
  sockets: Gauge;
  answers: Gauge;
  refusalsSeen: Map<string, number>;
};

function create(): State {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const refusalsSeen = new Map<string, number>();
  const state: State = {
    registry,
    refusalsSeen,
    http: new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status (socket.io transport excluded).',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    sockets: new Gauge({ name: 'svc_widget_sockets_connected', help: 'Widget socket.io connections open on this instance.', registers: [registry] }),
    answers: new Gauge({ name: 'svc_answers_in_flight', help: 'Answers this instance is producing right now.', registers: [registry] }),
  };
  new Counter({
    name: 'svc_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit on this instance, by limiter.',
    labelNames: ['limiter'],
    registers: [registry],
    collect() {
      for (const [name, total] of refusalCounts) {
        const delta = total - (refusalsSeen.get(name) ?? 0);
        if (delta > 0) this.inc({ limiter: name }, delta);
        refusalsSeen.set(name, total);
      }
    },
  });
  new Gauge({
    name: 'svc_draining',
    help: '1 while this instance drains (SIGTERM), else 0.',
    registers: [registry],
    collect() {
      this.set(isDraining() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_db_pool_max',
    help: 'Database connections this instance may open (DATABASE_POOL_SIZE; 1 for the embedded database).',
    registers: [registry],
    collect() {
      this.set(getEnv().DATABASE_URL ? getEnv().DATABASE_POOL_SIZE : 1);
    },
  });
  new Gauge({
    name: 'svc_db_pool_connections',
    help: "This instance's open database connections by state (PostgreSQL pg_stat_activity: active, idle, idle in transaction).",
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      if (!getEnv().DATABASE_URL) return;
      try {
        const { db } = await getDatabase();
        const states = await withTimeout(countPoolConnections(db, poolApplicationName()), 1000);
        for (const [s, n] of Object.entries(states)) this.set({ state: s }, n);
      } catch {
        /* database away: /readyz says so; the scrape still answers */
      }
    },
  });
  new Gauge({
    name: 'svc_db_read_target',
    help: 'Where exports, insights and the Customer API lists of API keys read now: 1 for the replica or the primary (DATABASE_READ_URL; absent without it).',
    labelNames: ['target'],
    registers: [registry],
    async collect() {
      this.reset();
      const s = await readState().catch(() => null);
      if (!s) return;
      this.set({ target: 'replica' }, s.target === 'replica' ? 1 : 0);
      this.set({ target: 'primary' }, s.target === 'primary' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_db_replica_lag_seconds',
    help: "The read replica's replay lag behind the primary, sampled every 2 s (absent while unknown).",
    registers: [registry],
    async collect() {
      this.reset();
      const s = await readState().catch(() => null);
      if (s?.lagSeconds != null) this.set(s.lagSeconds);
    },
  });
  // Last, so a scrape's own pool query above is counted in the same scrape.
  const seen = { statements: 0, transactions: 0 };
  for (const kind of ['statements', 'transactions'] as const) {
    new Counter({
      name: `svc_db_${kind}_total`,
      help: `SQL ${kind} this instance has run (through the query layer; a transaction's BEGIN and COMMIT are not statements here).`,
      registers: [registry],
      collect() {
        const now = databaseCounts()[kind];
        if (now > seen[kind]) this.inc(now - seen[kind]);
        seen[kind] = now;
      },
    });
  }
  return state;
}

function state(): State {
  return processSingleton('svc.metrics', (): State => create());
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}

export const metrics = {
  /** +1 when a widget socket connects, -1 when it disconnects. */
  socketConnected(delta: 1 | -1): void {
    state().sockets.inc(delta);
  },
  /** +1 when an answer starts being produced, -1 when it is stored (or given up). */
  answerInFlight(delta: 1 | -1): void {
    state().answers.inc(delta);
  },
  httpRequest(method: string, route: string, status: number, seconds: number): void {
    state().http.observe({ method, route, status: String(status) }, seconds);
  },
};

export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  const s = state();
  return { contentType: s.registry.contentType, body: await s.registry.metrics() };
}
