/**
 * N production server processes (`node --import tsx server.ts`, the production build) on one
 * shared PostgreSQL + Redis, each with its own DATA_DIR and port: the deployment of CONTRACTS §9.
 * Minimal spawner of the ops track, in the shape of tests/helpers/instances.ts (chatcore); the
 * lead unifies them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './nginx';

export type Instance = {
  index: number; url: string; port: number; dataDir: string;
  child: ChildProcess;
  /** Everything the process wrote on stdout (LOG_FORMAT=json: one JSON object a line). */
  stdout: () => string;
  stderr: () => string;
  /** Sends a signal and resolves with the exit code (or signal) once the process is gone. */
  kill: (signal?: NodeJS.Signals) => Promise<number | string>;
  exited: () => boolean;
};

export type Cluster = { instances: Instance[]; urls: string[]; stop: () => Promise<void> };

export type ClusterOptions = {
  databaseUrl: string; redisUrl?: string; redisPrefix?: string;
  env?: Record<string, string>;
  startTimeoutMs?: number;
};

const ROOT = path.resolve(__dirname, '..', '..');

export async function startInstance(index: number, opts: ClusterOptions): Promise<Instance> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-instance-${index}-`));
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('NODE_TEST') || k === 'TEST_DB') delete env[k];
  Object.assign(env, {
    NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1', HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir,
    SVC_DEMO: '0', DATABASE_URL: opts.databaseUrl, TRUST_PROXY: '1', ...(opts.env ?? {}),
  });
  if (opts.redisUrl) { env.REDIS_URL = opts.redisUrl; env.REDIS_PREFIX = opts.redisPrefix ?? 'svc:'; } else delete env.REDIS_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => { out += s; });
  child.stderr!.setEncoding('utf8').on('data', (s: string) => { err += s; });
  const exit = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 120_000);
  for (;;) {
    if (exited()) throw new Error(`instance ${index} exited while starting: ${err.slice(-2000)}`);
    try { if ((await fetch(`${url}/healthz`)).ok) break; } catch { /* not yet */ }
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`instance ${index} did not start: ${err.slice(-2000)}`); }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    index, url, port, dataDir, child,
    stdout: () => out, stderr: () => err, exited,
    kill: async (signal = 'SIGTERM') => {
      if (!exited()) child.kill(signal);
      const code = await exit;
      fs.rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Starts `n` instances one after another (parallel starts fight over 2 cores and time out). */
export async function startInstances(n: number, opts: ClusterOptions): Promise<Cluster> {
  const instances: Instance[] = [];
  const stop = async () => {
    await Promise.all(instances.map(async (i) => {
      const t = setTimeout(() => i.child.kill('SIGKILL'), 15_000);
      await i.kill('SIGTERM');
      clearTimeout(t);
    }));
  };
  try {
    for (let i = 0; i < n; i++) instances.push(await startInstance(i, opts));
  } catch (e) {
    await stop();
    throw e;
  }
  return { instances, urls: instances.map((i) => i.url), stop };
}
