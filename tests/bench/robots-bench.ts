/**
 * robots.txt wildcard matching under the ReDoS attack of issue 33: a Disallow of N stars
 * (`/*a*a…*X`) against a path of `a`s that never matches. The RegExp matcher this replaced
 * (kept below for the "before" figure) runs in a worker that is stopped after BEFORE_BUDGET_MS.
 * `npm run bench:robots` (add `--before` to time the old matcher too).
 */
import { Worker } from 'node:worker_threads';
import { parseRobots } from '../../lib/knowledge/robots';

const BEFORE_BUDGET_MS = 60_000;
const CASES: Array<[stars: number, pathChars: number]> = [
  [12, 36],
  [16, 64],
  [64, 2048],
];

/** The matcher before issue 33: each `*` became `.*` in one backtracking RegExp. */
const oldPattern = (p: string) =>
  new RegExp(
    `^${p
      .replace(/[.+?^{}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\\\$$|\$$/, '$')}`,
  );

const attack = (stars: number, pathChars: number) => ({ rule: `/${'*a'.repeat(stars)}X`, path: `/${'a'.repeat(pathChars - 1)}` });

const OLD_RUN = `const { parentPort, workerData } = require('node:worker_threads');
const oldPattern = ${oldPattern.toString()};
const t = performance.now();
oldPattern(workerData.rule).test(workerData.path);
parentPort.postMessage(performance.now() - t);`;

void main();

async function main() {
  const before = process.argv.includes('--before');
  for (const [stars, pathChars] of CASES) {
    const { rule, path } = attack(stars, pathChars);
    const robots = parseRobots(`User-agent: *\nDisallow: ${rule}\n`, 'svc-kb-crawler');
    const runs = 1000;
    for (let i = 0; i < runs; i++) robots.isAllowed(path);
    const t = performance.now();
    for (let i = 0; i < runs; i++) robots.isAllowed(path);
    const after = (performance.now() - t) / runs;
    let old = 'not run';
    if (before && pathChars <= 64) {
      old = await new Promise<string>((resolve) => {
        const w = new Worker(OLD_RUN, { eval: true, workerData: { rule, path } });
        const timer = setTimeout(() => void w.terminate().then(() => resolve(`> ${BEFORE_BUDGET_MS / 1000} s (stopped)`)), BEFORE_BUDGET_MS);
        w.once('message', (ms: number) => {
          clearTimeout(timer);
          void w.terminate();
          resolve(`${(ms / 1000).toFixed(2)} s`);
        });
      });
    }
    console.log(
      `${stars} stars vs ${pathChars}-character path: after ${(after * 1000).toFixed(1)} µs per check (mean of ${runs} after as many warm-up runs); before ${old}`,
    );
  }
}
