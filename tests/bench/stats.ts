/** Latency statistics and the two load shapes: sequential (c=1) and closed-loop concurrency. */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';

export type LatencyStats = { runs: number; p50: number; p99: number; mean: number; min: number; max: number };

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function summarize(samplesMs: number[]): LatencyStats {
  const s = [...samplesMs].sort((a, b) => a - b);
  const sum = s.reduce((a, b) => a + b, 0);
  return { runs: s.length, p50: percentile(s, 50), p99: percentile(s, 99), mean: sum / Math.max(1, s.length), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

/** "p50 …, p99 …, max … (n=…)" of latencies in ms, as the benches print them. */
export function latencyLine(samplesMs: number[]): string {
  const s = summarize(samplesMs);
  return `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms (n=${s.runs})`;
}

/** user+system CPU seconds of a process so far (Linux /proc). */
export function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Remembers a run's start and load; `line()` is the machine line BENCHMARKS.md records beside the figures. */
export function startRun(): { started: Date; line(): string } {
  const started = new Date();
  const load0 = os.loadavg();
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  return {
    started,
    line: () => `machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, started ${started.toISOString()}, load ${load(load0)} → ${load(os.loadavg())}`,
  };
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** Runs `fn` warmup times, then `runs` times one after another; `fn(i)` gets the run index. */
export async function sequential(fn: (i: number) => Promise<unknown>, warmup: number, runs: number): Promise<LatencyStats> {
  for (let i = 0; i < warmup; i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = nowMs();
    await fn(warmup + i);
    samples.push(nowMs() - t0);
  }
  return summarize(samples);
}

export type ThroughputStats = { concurrency: number; seconds: number; requests: number; errors: number; rps: number; p50: number; p99: number };

/** `concurrency` closed loops calling `fn` until `seconds` have passed (bounded by the deadline). */
export async function closedLoop(fn: (i: number) => Promise<unknown>, concurrency: number, seconds: number): Promise<ThroughputStats> {
  const samples: number[] = [];
  let errors = 0;
  let counter = 0;
  const start = nowMs();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (nowMs() < deadline) {
        const t0 = nowMs();
        try {
          await fn(counter++);
          samples.push(nowMs() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (nowMs() - start) / 1000;
  const s = summarize(samples);
  return { concurrency, seconds: elapsed, requests: samples.length, errors, rps: samples.length / elapsed, p50: s.p50, p99: s.p99 };
}

export type HttpResult = { status: number; body: string };

/** A keep-alive HTTP client for the server under test (loopback only). */
export class HttpClient {
  readonly agent: http.Agent;
  constructor(
    private base: URL,
    private headers: Record<string, string>,
    maxSockets = 32,
  ) {
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(base.hostname)) throw new Error(`refusing non-loopback target ${base}`);
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  get(path: string, timeoutMs = 60_000): Promise<HttpResult> {
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(path, this.base), { method: 'GET', agent: this.agent, headers: this.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms: GET ${path}`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** GET that must answer 200 (else throws with the start of the body). */
  async ok(path: string): Promise<string> {
    const r = await this.get(path);
    if (r.status !== 200) throw new Error(`GET ${path}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    return r.body;
  }

  close(): void {
    this.agent.destroy();
  }
}
