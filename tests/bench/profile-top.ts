/**
 * `tsx tests/bench/profile-top.ts FILE.cpuprofile [N]`: where a CPU profile's time went — self time
 * by function (with its file) and by package or folder, the top N of each (default 25). Reads
 * the profiles of chat-bench's --cpu-prof and of tests/api/answer-cost.test.ts (ANSWER_COST_CPU_PROF).
 */
import fs from 'node:fs';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const [file, n = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: tsx tests/bench/profile-top.ts FILE.cpuprofile [N]');
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => {
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = (profile.endTime - profile.startTime) / 1000;

/** A file's package (node_modules/<name>), the repo folder (lib/knowledge), node's internals or the engine's own work. */
function area(url: string): string {
  if (!url) return '(engine: gc, idle, program, native)';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return 'node internals';
  const own = url.match(/\/((?:lib|db|tests|app)\/[^/]+)/);
  return own ? own[1]! : url;
}

const functions = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|lib|db|tests)\//, '$1/')}:${lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + us);
  areas.set(area(url), (areas.get(area(url)) ?? 0) + us);
}
const top = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, Number(n))
    .map(([k, us]) => `${(us / 1000).toFixed(1).padStart(9)} ms ${((100 * us) / 1000 / total).toFixed(1).padStart(5)} %  ${k}`)
    .join('\n');
console.log(`${total.toFixed(0)} ms profiled\n\nby area:\n${top(areas)}\n\nby function (self time):\n${top(functions)}`);
