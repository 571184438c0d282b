/**
 * The import rule of docs/architecture.md: a folder imports from its own layer and the layers
 * below, never from one above (unless the import's line carries `// layer: <why>`), and folders
 * never import each other in a circle.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

/** Top to bottom; a unit is a folder of lib/ or db/, a file at lib/'s top, app/, or a root file. */
const LAYERS: string[][] = [
  ['app', 'server', 'proxy', 'lib/cli'],
  ['lib/server', 'lib/startup'],
  ['lib/customer-api', 'lib/chat', 'lib/inbox', 'lib/widget', 'lib/email'],
  ['lib/dashboard', 'lib/demo'],
  ['lib/visitor'],
  [
    'lib/answers',
    'lib/export',
    'lib/imports',
    'lib/webhooks',
    'lib/team',
    'lib/mail',
    'lib/widget-clients',
    'lib/widget-releases',
    'lib/uploads',
    'lib/knowledge',
    'lib/documents',
    'lib/insights',
    'lib/privacy',
  ],
  ['lib/conversations', 'lib/responses', 'lib/accounts', 'lib/bot'],
  ['lib/auth', 'lib/limits', 'lib/cache', 'lib/ops', 'lib/api', 'lib/markdown', 'lib/health'],
  ['lib/net', 'lib/redis'],
  ['db/client', 'db/hosts', 'db/read', 'db/queries', 'db/schema'],
  ['lib/core', 'lib/env'],
  ['lib/zod-issues'],
];
const rank = new Map(LAYERS.flatMap((units, i) => units.map((u) => [u, LAYERS.length - i] as const)));

function sources(): string[] {
  const out: string[] = ['server.ts', 'proxy.ts'];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'migrations') walk(p);
      } else if (/\.(ts|tsx|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
    }
  };
  for (const d of ['app', 'lib', 'db']) walk(d);
  return out;
}

function unitOf(file: string): string {
  const f = file.replace(/\.(ts|tsx|mts|mjs|json)$/, '');
  const parts = f.split('/');
  if (parts[0] === 'app') return 'app';
  if ((parts[0] === 'lib' || parts[0] === 'db') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return f;
}

type Edge = { from: string; to: string; file: string; line: string };
function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sources()) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      const m = /(?:^\s*(?:import|export)\s[^'"]*?from\s+|import\(\s*)['"]([^'"]+)['"]/.exec(line);
      if (!m) continue;
      const spec = m[1]!;
      if (!spec.startsWith('.') && !spec.startsWith('@/')) continue;
      const target = spec.startsWith('@/') ? spec.slice(2) : path.normalize(path.join(path.dirname(file), spec));
      const from = unitOf(file);
      const to = unitOf(target);
      if (from !== to) out.push({ from, to, file, line });
    }
  }
  return out;
}

describe('layers (docs/architecture.md)', () => {
  const all = edges();

  it('every unit that imports or is imported has a layer', () => {
    const unknown = [...new Set(all.flatMap((e) => [e.from, e.to]))].filter((u) => !rank.has(u));
    assert.deepEqual(unknown, [], 'add these to LAYERS and to docs/architecture.md');
  });

  it('no import goes up a layer without a `// layer:` comment saying why', () => {
    const up = all.filter((e) => rank.get(e.to)! > rank.get(e.from)! && !/\/\/ layer: \S/.test(e.line));
    assert.deepEqual(
      up.map((e) => `${e.file}: ${e.from} -> ${e.to}`),
      [],
    );
  });

  it('folders import each other in no circle', () => {
    const next = new Map<string, Set<string>>();
    for (const e of all) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (u: string, trail: string[]) => {
      if (state.get(u) === 'done') return;
      if (state.get(u) === 'open') {
        circles.push([...trail.slice(trail.indexOf(u)), u].join(' -> '));
        return;
      }
      state.set(u, 'open');
      for (const v of next.get(u) ?? []) visit(v, [...trail, u]);
      state.set(u, 'done');
    };
    for (const u of next.keys()) visit(u, []);
    assert.deepEqual(circles, []);
  });
});
