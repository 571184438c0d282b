/**
 * Experiment, not part of `npm run bench:api`: Next.js production server vs a bare node:http
 * server (tests/bench/bare-server.ts) running the same auth + service code, on one benchmark
 * database, back to back. usage: tsx tests/bench/bare-probe.ts DBNAME
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { HttpClient, closedLoop, sequential } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

async function main() {
  const dbName = process.argv[2];
  if (!dbName || !/^[a-z0-9_]+$/.test(dbName)) throw new Error('usage: bare-probe DBNAME');
  const env = { ...process.env, DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${dbName}`, NODE_ENV: 'production', SVC_DEMO: '0', HOST: '127.0.0.1' } as NodeJS.ProcessEnv;
  const k = spawnSync(TSX, ['lib/cli/main.ts', 'apikey', 'create', '--account', '1', '--name', 'bare-probe'], { cwd: ROOT, env, encoding: 'utf8' });
  const key = (JSON.parse(k.stdout) as { key: string }).key;
  const ids = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', dbName, '-Atc', 'SELECT id FROM responses WHERE account_id = 1 ORDER BY md5(id::text) LIMIT 400'], { encoding: 'utf8' }).stdout.trim().split('\n');
  const paths: Record<string, (i: number) => string> = {
    'GET /healthz': () => '/healthz',
    'list page 1 (15/page)': () => '/customer-api/v2/response?resultsPerPage=15',
    'get response by id': (i) => `/customer-api/v2/response/${ids[i % ids.length]}`,
  };
  for (const kind of ['next', 'bare', 'next', 'bare'] as const) {
    const port = 40000 + Math.floor(Math.random() * 10000);
    const child = kind === 'next'
      ? spawn(process.execPath, ['dist/server.js'], { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: 'ignore' })
      : spawn(TSX, ['tests/bench/bare-server.ts', String(port)], { cwd: ROOT, env, stdio: 'ignore' });
    try {
      const client = new HttpClient(new URL(`http://127.0.0.1:${port}`), { authorization: `Bearer ${key}` }, 32);
      const deadline = Date.now() + 60_000;
      for (;;) {
        try { if ((await client.get('/healthz', 2000)).status === 200) break; } catch { /* starting */ }
        if (Date.now() > deadline) throw new Error(`${kind} server did not start`);
        await new Promise((r) => setTimeout(r, 250));
      }
      for (const [name, p] of Object.entries(paths)) {
        const c1 = await sequential((i) => client.ok(p(i)), 50, 300);
        const c32 = await closedLoop((i) => client.ok(p(i)), 32, 5);
        console.log(`${kind.padEnd(4)} ${name.padEnd(24)} c=1 p50 ${c1.p50.toFixed(2)} ms p99 ${c1.p99.toFixed(2)} ms | c=32 ${Math.round(c32.rps)} req/s (errors ${c32.errors})`);
      }
      client.close();
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
}

main().then(() => { process.exitCode = 0; }, (e) => { console.error(e); process.exitCode = 1; });
