import { getDatabase } from '../db/client';
import { pingDatabase } from '../db/queries/health';

/**
 * GET /healthz, the liveness check (docs/contracts.md §9: "/healthz stays the liveness check"): answers
 * while this process works. The embedded database (PGlite) runs inside the process, so it is pinged:
 * a PGlite that no longer answers is a broken process, which a restart mends. A PostgreSQL server
 * is not pinged: it is a dependency, and its outage makes every instance unready (/readyz, 503),
 * never restarted, as for Redis. A liveness probe that failed with PostgreSQL restarted every
 * instance of a deployment during each database restart (docs/DECISIONS.md).
 */
export async function checkHealth() {
  const database = await getDatabase();
  if (database.kind === 'pglite') await pingDatabase(database.db);
  return { status: 'ok', database: database.kind };
}
