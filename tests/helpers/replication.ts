/**
 * A private PostgreSQL cluster with real streaming replication (CONTRACTS §19 tests): a primary, a
 * synchronous standby made with `pg_basebackup` (a commit returns once the standby has it), and
 * optionally an asynchronous read replica. Runs the server binaries as user `postgres` in a temp
 * directory; `destroy()` stops every server and removes it (call it in `finally`/`after`).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './instances';

const PG_BIN = '/usr/lib/postgresql/15/bin';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function asPostgres(args: string[], timeout = 60_000): string {
  const r = spawnSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8', timeout });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** One server of the cluster: its data directory and port. */
export class Node {
  constructor(
    readonly name: string,
    readonly dir: string,
    readonly port: number,
  ) {}
  get url() {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }
  get host() {
    return `127.0.0.1:${this.port}`;
  }

  start(settings: string[] = []) {
    const opts = [`-p ${this.port}`, `-k ${this.dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c max_connections=80', ...settings];
    asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-l', `${this.dir}.log`, '-w', '-t', '30', '-o', opts.join(' '), 'start']);
  }

  stop(mode: 'fast' | 'immediate' = 'fast') {
    asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-m', mode, '-w', '-t', '30', 'stop']);
  }

  /** The postmaster's pid (first line of postmaster.pid), or null when it is not running. */
  pid(): number | null {
    try {
      const pid = Number.parseInt(fs.readFileSync(path.join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0]!, 10);
      process.kill(pid, 0); // a killed server leaves its pid file behind
      return pid;
    } catch {
      return null;
    }
  }

  /** A crash: SIGKILL to the postmaster and each of its children (a machine lost with its disk's last state). */
  kill9() {
    const pid = this.pid();
    if (!pid) return;
    const children = (() => {
      try {
        return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      } catch {
        return [];
      }
    })();
    for (const p of [pid, ...children]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
  }

  promote() {
    asPostgres([`${PG_BIN}/pg_ctl`, '-D', this.dir, '-w', '-t', '30', 'promote']);
  }

  /** Runs one SQL statement with psql and returns its unaligned output. */
  sql(query: string): string {
    return asPostgres([`${PG_BIN}/psql`, '-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '-d', 'postgres', '-XAtc', query], 30_000).trim();
  }
}

export class ReplicatedCluster {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-repl-'));
  primary!: Node;
  standby!: Node;
  replica: Node | null = null;

  /** `DATABASE_URL` naming both servers, the standby first (where the driver's own host choice failed, issue #38). */
  get url() {
    return `postgres://postgres@${this.standby.host},${this.primary.host}/postgres?target_session_attrs=read-write`;
  }

  /** A primary with a synchronous standby, and an asynchronous replica when asked. */
  static async create(opts: { replica?: boolean } = {}): Promise<ReplicatedCluster> {
    const c = new ReplicatedCluster();
    try {
      fs.chmodSync(c.dir, 0o777);
      spawnSync('chown', ['postgres', c.dir]);
      c.primary = new Node('primary', path.join(c.dir, 'primary'), await freePort());
      asPostgres([`${PG_BIN}/initdb`, '-D', c.primary.dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
      c.primary.start(["-c synchronous_standby_names='standby'"]);
      c.standby = await c.follower('standby', c.primary);
      if (opts.replica) c.replica = await c.follower('replica', c.primary);
      // The standby acknowledges commits before the tests write.
      for (let i = 0; i < 100; i++) {
        if (c.primary.sql("select count(*) from pg_stat_replication where application_name = 'standby' and sync_state = 'sync'") === '1') break;
        await sleep(100);
      }
      return c;
    } catch (e) {
      c.destroy();
      throw e;
    }
  }

  private async follower(name: string, of: Node): Promise<Node> {
    const node = new Node(name, path.join(this.dir, name), await freePort());
    asPostgres([`${PG_BIN}/pg_basebackup`, '-h', '127.0.0.1', '-p', String(of.port), '-U', 'postgres', '-D', node.dir, '-R', '-X', 'stream', '-c', 'fast']);
    // Its name in pg_stat_replication (synchronous_standby_names matches it).
    fs.appendFileSync(
      path.join(node.dir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=127.0.0.1 port=${of.port} user=postgres application_name=${name}'\nhot_standby_feedback = on\n`,
    );
    node.start();
    return node;
  }

  destroy() {
    for (const n of [this.primary, this.standby, this.replica]) {
      if (!n?.pid()) continue;
      try {
        n.stop('immediate');
      } catch {
        n.kill9();
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
