/**
 * `npm run bench:chat:compare -- --base 2226156 --head HEAD` — the chat benchmark on two commits,
 * side by side on one machine: each commit is checked out with `git worktree add` into the OS temp
 * dir, installed (`npm ci --prefer-offline`, from the npm cache) and built, then chat-bench.ts of
 * that checkout runs alternately on each (base, head, base, head … for --rounds rounds) at one
 * steady rate. Prints, per run, the server's CPU per answer and the ask → first delta p99, and the
 * machine's `uptime` before each run (other work on the machine shows in the figures).
 *
 * Options: --base SHA --head SHA|HEAD --rounds 2 --rate 150 --askers 100 --idle 2000 --duration 20
 *   --keep (leave the worktrees for another run; they are reused when present)
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(__dirname, '..', '..');
const { values: argv } = parseArgs({
  options: {
    base: { type: 'string', default: '2226156' },
    head: { type: 'string', default: 'HEAD' },
    rounds: { type: 'string', default: '2' },
    rate: { type: 'string', default: '150' },
    askers: { type: 'string', default: '100' },
    idle: { type: 'string', default: '2000' },
    duration: { type: 'string', default: '20' },
    keep: { type: 'boolean', default: false },
  },
  strict: true,
});

function git(...args: string[]): string {
  const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

function run(cmd: string, args: string[], cwd: string): void {
  const r = spawnSync(cmd, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}`);
}

/** A built checkout of `commit` in the temp dir. */
function checkout(commit: string): string {
  const sha = git('rev-parse', '--verify', `${commit}^{commit}`);
  const dir = path.join(os.tmpdir(), `svc-chat-compare-${sha.slice(0, 12)}`);
  if (!fs.existsSync(path.join(dir, '.next', 'BUILD_ID'))) {
    if (!fs.existsSync(dir)) git('worktree', 'add', '--detach', dir, sha);
    console.error(`${sha.slice(0, 12)}: npm ci and build in ${dir}`);
    run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], dir);
    run('node', ['scripts/build.mjs'], dir);
  }
  return dir;
}

type Figures = { label: string; cpuMs: number; p99: number; p50: number; uptime: string };

function bench(dir: string): Promise<Figures[]> {
  const uptime = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  const args = ['tests/bench/chat-bench.ts', '--levels', argv.idle!, '--rate', argv.rate!, '--askers', argv.askers!, '--duration', argv.duration!];
  args.push('--sweep', '', '--no-diagnose', '--no-write', '--no-build');
  return new Promise((resolve, reject) => {
    // The ask limits raised for both sides (an older bench does not raise them itself).
    const limits = {
      ASKS_PER_MINUTE_PER_ADDRESS: '1000000',
      ASKS_PER_MINUTE_PER_VISITOR: '1000000',
      ASKS_PER_MINUTE_PER_CLIENT: '1000000',
      WIDGET_SOCKETS_PER_ADDRESS: '1000000',
    };
    const child = spawn(path.join(dir, 'node_modules', '.bin', 'tsx'), args, {
      cwd: dir,
      env: { ...process.env, ...limits },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (code) => {
      const out: Figures[] = [];
      let last: Omit<Figures, 'cpuMs'> | null = null;
      for (const line of err.split('\n')) {
        const m = /\] (.+?): \d+ measured asks .*first delta p50 ([\d.]+) p99 ([\d.]+) ms/.exec(line);
        if (m) last = { label: m[1]!, p50: Number(m[2]), p99: Number(m[3]), uptime };
        const c = /CPU per ask: server ([\d.]+) ms/.exec(line);
        if (c && last) {
          out.push({ ...last, cpuMs: Number(c[1]) });
          last = null;
        }
      }
      if (code !== 0 || out.length === 0) reject(new Error(`chat-bench in ${dir} exited ${code}:\n${err.slice(-2000)}`));
      else resolve(out);
    });
  });
}

async function main() {
  const sides = [
    { name: `base ${argv.base}`, dir: checkout(argv.base!) },
    { name: `head ${argv.head}`, dir: checkout(argv.head!) },
  ];
  const rows: string[] = [];
  for (let round = 1; round <= Number(argv.rounds); round++) {
    for (const side of sides) {
      for (const f of await bench(side.dir)) {
        const row = `round ${round} | ${side.name} | ${f.label} | CPU per answer ${f.cpuMs.toFixed(2)} ms | first delta p50 ${f.p50.toFixed(1)} p99 ${f.p99.toFixed(1)} ms | ${f.uptime}`;
        console.log(row);
        rows.push(row);
      }
    }
  }
  if (!argv.keep) for (const side of sides) git('worktree', 'remove', '--force', side.dir);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
