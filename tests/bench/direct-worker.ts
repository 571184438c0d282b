/**
 * Child process of the benchmark: times the scenarios' SQL through the driver on the database
 * its environment names (used for PGlite, which one process at a time may open).
 * usage: tsx tests/bench/direct-worker.ts SPEC.json OUT.json   (env DATA_DIR or DATABASE_URL)
 */
import fs from 'node:fs';
import type { Picks } from './scenarios';

type Spec = { picks: Picks; warmup: number; runs: number; only?: string[] };

async function main() {
  const [specFile, outFile] = process.argv.slice(2);
  if (!specFile || !outFile) throw new Error('usage: direct-worker SPEC.json OUT.json');
  const spec = JSON.parse(fs.readFileSync(specFile, 'utf8')) as Spec;
  const { getDb, closeDatabase } = await import('../../db/client');
  const { buildScenarios, measureDirect } = await import('./scenarios');
  try {
    const db = await getDb();
    const scenarios = buildScenarios(spec.picks).filter((s) => !spec.only || spec.only.includes(s.id));
    const results = await measureDirect(db, scenarios, spec.warmup, spec.runs, (m) => process.stderr.write(`${m}\n`));
    fs.writeFileSync(outFile, JSON.stringify(results));
  } finally {
    await closeDatabase();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`direct-worker: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
