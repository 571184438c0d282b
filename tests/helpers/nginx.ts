/**
 * A real load balancer for the multi-instance tests: Debian's nginx, unprivileged
 * (`nginx -p <dir> -c <conf> -g 'daemon off;'`, pid, logs and temp files inside <dir>), in front
 * of N instances. The configuration is `nginxConfig()`; README "Running several instances" shows
 * the same one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './instances';

export type Nginx = { url: string; port: number; dir: string; stop: () => Promise<void>; errorLog: () => string };

export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

export function nginxAvailable(): boolean {
  return fs.existsSync(NGINX_BIN);
}

/**
 * The deployment's nginx configuration. `hash $remote_addr consistent` keeps one client on one
 * instance (socket.io long-polling needs it; websockets do not) — unlike `ip_hash` it uses the
 * whole address, so tests can spread clients over instances with source addresses 127.0.0.N.
 * `X-Upstream` names the instance that answered (test only: it reveals internal addresses).
 */
export function nginxConfig(opts: { dir: string; listen: string; upstreams: string[]; debugHeader?: boolean }): string {
  const d = opts.dir;
  return `worker_processes 1;
pid ${d}/nginx.pid;
error_log ${d}/error.log warn;
events { worker_connections 16384; }
http {
  access_log ${d}/access.log;
  client_body_temp_path ${d}/tmp/body;
  proxy_temp_path ${d}/tmp/proxy;
  fastcgi_temp_path ${d}/tmp/fastcgi;
  uwsgi_temp_path ${d}/tmp/uwsgi;
  scgi_temp_path ${d}/tmp/scgi;
  client_max_body_size 20m;

  # Upgrade only what asks for it; other requests keep their upstream connection alive.
  map $http_upgrade $connection_upgrade { default upgrade; '' ''; }

  upstream svc {
    hash $remote_addr consistent;
${opts.upstreams.map((u) => `    server ${u} max_fails=0;`).join('\n')}
    keepalive 32;
    keepalive_timeout 4s;
  }

  server {
    listen ${opts.listen};
    location / {
      proxy_pass http://svc;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_read_timeout 1h;
      proxy_buffering off;
      proxy_next_upstream error timeout http_502 http_503;${opts.debugHeader ? '\n      add_header X-Upstream $upstream_addr always;' : ''}
    }
  }
}
`;
}

/** Starts nginx in front of `upstreams` (host:port). Resolves once it answers. */
export async function startNginx(upstreams: string[], opts: { port?: number } = {}): Promise<Nginx> {
  if (!nginxAvailable()) throw new Error(`${NGINX_BIN} not found (.ci/run installs Debian's nginx)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-nginx-'));
  fs.mkdirSync(path.join(dir, 'tmp'));
  const port = opts.port ?? (await freePort());
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(conf, nginxConfig({ dir, listen: `127.0.0.1:${port}`, upstreams, debugHeader: true }));
  // As root, nginx's workers would switch to "nobody", who cannot write the temp dirs.
  if (process.getuid?.() === 0) fs.writeFileSync(conf, `user root;\n${fs.readFileSync(conf, 'utf8')}`);
  const child: ChildProcess = spawn(NGINX_BIN, ['-e', path.join(dir, 'error.log'), '-p', dir, '-c', conf, '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const errorLog = () => {
    try {
      return fs.readFileSync(path.join(dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGQUIT');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = errorLog();
      await stop();
      throw new Error(`nginx exited with ${child.exitCode}: ${stderr}${log}`);
    }
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not listen on ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `http://127.0.0.1:${port}`, port, dir, stop, errorLog };
}
