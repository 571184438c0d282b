// The production build's stamp: a fingerprint of every source the build reads, written by
// scripts/build.mjs beside the build and compared by scripts/start.mjs, so `npm start` after a
// `git pull` (or any edit) rebuilds instead of serving the old build. Content hashes, not mtimes
// or git: it works in a tarball too, and a checkout that restores old bytes matches its build.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const STAMP_FILE = '.next/svc-build-stamp.json';
// What `node scripts/build.mjs` reads: the Next app and everything it imports, the custom server,
// the widget sources, and the build's own configuration. Outputs (public/chatbot/loader.js,
// public/chat/v0, .next, dist) are not sources.
const SOURCE_DIRS = ['app', 'lib', 'db', 'components'];
const ROOT_FILE = /^(?!next-env\.d\.ts$)[^.][^/]*\.(ts|tsx|mjs|cjs|js|json)$/;
const ROOT_EXTRA = ['scripts/build.mjs', 'scripts/widget.mjs', 'scripts/build-stamp.mjs'];
const SKIP = new Set(['node_modules', '.next', 'dist', '.data', '.git']);

function walk(dir, out) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const p = path.posix.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/** The list of source files (relative, sorted) under `root`. */
export function sourceFiles(root = process.cwd()) {
  const out = [];
  const cwd = process.cwd();
  process.chdir(root);
  try {
    for (const d of SOURCE_DIRS) walk(d, out);
    for (const e of readdirSync('.', { withFileTypes: true })) if (e.isFile() && ROOT_FILE.test(e.name) && e.name !== 'tsconfig.tsbuildinfo') out.push(e.name);
    for (const f of ROOT_EXTRA) if (existsSync(f)) out.push(f);
  } finally {
    process.chdir(cwd);
  }
  return [...new Set(out)].sort();
}

/** SHA-256 over every source file's path and bytes. */
export function sourceFingerprint(root = process.cwd()) {
  const h = createHash('sha256');
  const files = sourceFiles(root);
  for (const f of files) {
    h.update(f)
      .update('\0')
      .update(readFileSync(path.join(root, f)))
      .update('\0');
  }
  return { hash: h.digest('hex'), files: files.length };
}

export function readStamp(root = process.cwd()) {
  try {
    return JSON.parse(readFileSync(path.join(root, STAMP_FILE), 'utf8'));
  } catch {
    return null;
  }
}

export function writeStamp(fingerprint, root = process.cwd()) {
  writeFileSync(
    path.join(root, STAMP_FILE),
    `${JSON.stringify({ sources: fingerprint.hash, files: fingerprint.files, built_at: new Date().toISOString() }, null, 2)}\n`,
  );
}

/** Why the build in `root` must be (re)built, or null when it matches the sources. */
export function rebuildReason(root = process.cwd()) {
  if (!existsSync(path.join(root, '.next/BUILD_ID')) || !existsSync(path.join(root, 'dist/server.js'))) return 'no production build yet';
  const stamp = readStamp(root);
  if (!stamp?.sources) return 'the build has no source stamp';
  if (stamp.sources !== sourceFingerprint(root).hash) return 'the sources changed since the last build';
  return null;
}
