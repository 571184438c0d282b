/**
 * Several real server PROCESSES (docs/contracts.md §9): each instance is `node scripts/start.mjs` (the
 * production build, as `npm start` runs it) with its own port, its own DATA_DIR and the env given,
 * typically one PostgreSQL (DATABASE_URL) and one Redis (REDIS_URL + a REDIS_PREFIX of the run).
 * Starts wait for /healthz; stops send a real signal (SIGTERM drains, SIGKILL is a crash).
 * Every wait is bounded. Also a private PostgreSQL and Redis server a fault test can stop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Variables a test process may carry that must not leak into an instance unless given. */
const NOT_INHERITED = /^(NODE_TEST.*|TEST_DB|DATABASE_URL|REDIS_URL|REDIS_PREFIX)$/;

export class Instance {
  child: ChildProcess | null = null;
  /** stdout and stderr together, the last 20 KB (for failure messages). */
  output = '';
  private out = '';
  private err = '';
  exitCode: number | null = null;
  exitSignal: NodeJS.Signals | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly port: number,
    readonly env: Record<string, string>,
    readonly dataDir: string,
  ) {}

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }
  get running() {
    return this.child !== null && this.exitCode === null && this.exitSignal === null;
  }
  /** What the process wrote on stdout (LOG_FORMAT=json: one JSON object a line), the last 1 MB. */
  stdout() {
    return this.out;
  }
  stderr() {
    return this.err;
  }

  /** Starts the process and waits until /healthz answers 200. */
  async start(timeoutMs = 60_000): Promise<void> {
    this.exitCode = null;
    this.exitSignal = null;
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !NOT_INHERITED.test(k))) as NodeJS.ProcessEnv;
    const child = spawn(process.execPath, ['scripts/start.mjs'], {
      cwd: ROOT,
      env: { ...inherited, ...this.env, PORT: String(this.port), HOST: '127.0.0.1', DATA_DIR: this.dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (b: Buffer) => {
      this.output = (this.output + b.toString()).slice(-20_000);
    };
    child.stdout!.on('data', (b: Buffer) => {
      keep(b);
      this.out = (this.out + b.toString()).slice(-1_000_000);
    });
    child.stderr!.on('data', (b: Buffer) => {
      keep(b);
      this.err = (this.err + b.toString()).slice(-1_000_000);
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exitCode = code;
        this.exitSignal = signal;
        resolve();
      }),
    );
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`${this.name} exited during start (${this.exitCode ?? this.exitSignal}):\n${this.output}`);
      try {
        const r = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (r.status === 200) return;
      } catch {
        /* not listening yet */
      }
      await sleep(200);
    }
    this.child.kill('SIGKILL');
    throw new Error(`${this.name} did not become healthy within ${timeoutMs} ms:\n${this.output}`);
  }

  /** Sends a signal and waits for the exit; returns the exit code (null when killed by a signal). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 60_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.running) return { code: this.exitCode, signal: this.exitSignal };
    this.child!.kill(signal);
    // Cleared once the process exited: a pending timer kept a benchmark alive after its results.
    let pending: NodeJS.Timeout | undefined;
    const timer = new Promise<'timeout'>((r) => {
      pending = setTimeout(() => r('timeout'), timeoutMs);
    });
    try {
      if ((await Promise.race([this.exited.then(() => 'exited' as const), timer])) === 'timeout') {
        this.child!.kill('SIGKILL');
        await this.exited;
        throw new Error(`${this.name} did not exit within ${timeoutMs} ms after ${signal}:\n${this.output}`);
      }
    } finally {
      clearTimeout(pending);
    }
    return { code: this.exitCode, signal: this.exitSignal };
  }
}

export type Cluster = { instances: Instance[]; urls: string[]; close: () => Promise<void> };

/**
 * One instance with `env` (plus SVC_DEMO=0, NODE_ENV=production; nothing of the test process's
 * database or Redis unless given), its own port and DATA_DIR, started and healthy.
 */
export async function startInstance(name: string, env: Record<string, string>): Promise<Instance> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `svc-${name}-`));
  const inst = new Instance(name, await freePort(), { SVC_DEMO: '0', NODE_ENV: 'production', ...env }, dataDir);
  try {
    await inst.start();
  } catch (e) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return inst;
}

/** Stops an instance (SIGKILL unless given) and removes its DATA_DIR. */
export async function removeInstance(inst: Instance, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  await inst.stop(signal).catch(() => inst.stop('SIGKILL').catch(() => {}));
  fs.rmSync(inst.dataDir, { recursive: true, force: true });
}

/**
 * Starts `n` instances one after another (the first applies the migrations; parallel starts
 * fight over 2 cores). `close()` kills whatever still runs and removes the data dirs.
 */
export async function startInstances(n: number, env: Record<string, string>): Promise<Cluster> {
  const instances: Instance[] = [];
  const cluster: Cluster = {
    instances,
    get urls() {
      return instances.map((i) => i.url);
    },
    close: async () => {
      await Promise.all(instances.map((i) => removeInstance(i)));
    },
  };
  try {
    for (let k = 0; k < n; k++) instances.push(await startInstance(`instance-${k}`, env));
  } catch (e) {
    await cluster.close();
    throw e;
  }
  return cluster;
}

const PG_BIN = '/usr/lib/postgresql/15/bin';

/** A private PostgreSQL server (its own data directory and port) that a fault test may stop and start. */
export class PrivatePostgres {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-pg-'));
  constructor(readonly port: number) {}
  get url() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private pg(args: string[]) {
    const r = spawnSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
  }

  static async create(): Promise<PrivatePostgres> {
    const p = new PrivatePostgres(await freePort());
    fs.chmodSync(p.dir, 0o777);
    spawnSync('chown', ['postgres', p.dir]);
    p.pg([`${PG_BIN}/initdb`, '-D', `${p.dir}/data`, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    p.start();
    return p;
  }

  start() {
    this.pg([
      `${PG_BIN}/pg_ctl`,
      '-D',
      `${this.dir}/data`,
      '-l',
      `${this.dir}/log`,
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`,
      'start',
    ]);
  }

  /** `fast` disconnects every client at once (what a restart looks like to the service). */
  stop() {
    this.pg([`${PG_BIN}/pg_ctl`, '-D', `${this.dir}/data`, '-m', 'fast', '-w', '-t', '30', 'stop']);
  }

  destroy() {
    try {
      this.stop();
    } catch {
      /* already stopped */
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A private Redis server (no persistence) that a fault test may stop and start. */
/**
 * Points this test process's lib/redis/client at a private redis-server (REDIS_URL, and a
 * REDIS_PREFIX of `tag`), waits until it answers, and returns the server and the client module;
 * `close()` closes the process's connections and stops the server. For tests that run svc's Redis
 * code in the test process (needs `redis-server`).
 */
export async function processOnPrivateRedis(tag: string) {
  const redis = await PrivateRedis.create();
  process.env.REDIS_URL = redis.url;
  process.env.REDIS_PREFIX = `${tag}-${process.pid}:`;
  const client = await import('../../lib/redis/client');
  if (!(await client.whenReady(client.getRedis()!, 10_000))) throw new Error('the private Redis does not answer');
  return {
    redis,
    client,
    close: async () => {
      await client.closeRedis();
      await redis.stop();
    },
  };
}

export class PrivateRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  async start() {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = net.connect(this.port, '127.0.0.1', () => {
          s.end();
          resolve(true);
        });
        s.on('error', () => resolve(false));
      });
      if (ok) return;
      await sleep(100);
    }
    throw new Error('private redis-server did not start');
  }

  async stop() {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
    this.child = null;
  }
}

/**
 * A local OpenAI-compatible chat-completions server that streams `chunks` pieces, one every
 * `delayMs`: slow enough answers for a test to act while one is streaming. A real HTTP server.
 */
export class SlowModel {
  requests = 0;
  private server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      this.requests++;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (let i = 1; i <= this.chunks && !res.destroyed; i++) {
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `part${i} ` } }] })}\n\n`);
        await sleep(this.delayMs);
      }
      res.end('data: [DONE]\n\n');
    });
  });
  port = 0;
  constructor(
    public chunks: number,
    public delayMs: number,
  ) {}
  get url() {
    return `http://127.0.0.1:${this.port}/v1`;
  }
  /** The whole answer it gives. */
  get answer() {
    return Array.from({ length: this.chunks }, (_, i) => `part${i + 1} `).join('');
  }
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
