import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { AppError } from '../api/errors';
import { getEnv } from '../env';

/**
 * Widget releases: immutable bundles listed in lib/widget/releases.json (with their SRI hashes)
 * and three tracks. A track's default version is in releases.json (what a deployment ships);
 * operators repoint a track at run time (`widget track set` / `widget track rollback`), which
 * writes DATA_DIR/widget-tracks.json — no rebuild, no database, effective on the next request.
 */
export const TRACKS = ['stable', 'beta', 'lts'] as const;
export type Track = (typeof TRACKS)[number];

const Release = z.object({ version: z.string(), url: z.string(), integrity: z.string(), min_server_version: z.string(), released_at: z.string() });
const Releases = z.object({ releases: z.array(Release), tracks: z.record(z.string(), z.string()) });
const Overrides = z.object({ tracks: z.record(z.string(), z.object({ version: z.string(), history: z.array(z.string()) })) });
type Release = z.infer<typeof Release>;

function releasesFile() { return path.join(process.cwd(), 'lib', 'widget', 'releases.json'); }
function overridesFile() { return path.resolve(getEnv().DATA_DIR, 'widget-tracks.json'); }

function readReleases() {
  return Releases.parse(JSON.parse(fs.readFileSync(releasesFile(), 'utf8')));
}
function readOverrides(): z.infer<typeof Overrides> {
  try { return Overrides.parse(JSON.parse(fs.readFileSync(overridesFile(), 'utf8'))); } catch { return { tracks: {} }; }
}

function cmp(a: string, b: string): number {
  const pa = a.split('.').map(Number); const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

export function trackVersion(track: Track): string {
  return readOverrides().tracks[track]?.version ?? readReleases().tracks[track]!;
}

export type Manifest = Release & { track?: Track; pin?: string };

/** tracks/<track> or versions/<2.0 | 2.0.5>: the manifest, or null when nothing matches. */
export function resolveManifest(kind: string, name: string): Manifest | null {
  const { releases } = readReleases();
  if (kind === 'tracks' && (TRACKS as readonly string[]).includes(name)) {
    const v = trackVersion(name as Track);
    const r = releases.find((x) => x.version === v);
    return r ? { ...r, track: name as Track } : null;
  }
  if (kind === 'versions' && /^\d+\.\d+(\.\d+)?$/.test(name)) {
    const matching = releases.filter((r) => r.version === name || r.version.startsWith(`${name}.`)).sort((a, b) => cmp(b.version, a.version));
    const r = name.split('.').length === 3 ? releases.find((x) => x.version === name) : matching[0];
    return r ? { ...r, pin: name } : null;
  }
  return null;
}

function writeOverrides(o: z.infer<typeof Overrides>) {
  const file = overridesFile();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(o, null, 2));
  fs.renameSync(`${file}.tmp`, file);
}

function checkTrack(track: string): Track {
  if (!(TRACKS as readonly string[]).includes(track)) throw new AppError('invalid_request', `track must be one of ${TRACKS.join(', ')}`);
  return track as Track;
}

/** Points a track at a released version; the previous one is kept for rollback. */
export function setTrack(trackName: string, version: string) {
  const track = checkTrack(trackName);
  if (!readReleases().releases.some((r) => r.version === version)) throw new AppError('not_found', `No released widget version ${version}.`);
  const o = readOverrides();
  const current = trackVersion(track);
  const history = [...(o.tracks[track]?.history ?? []), current].slice(-20);
  o.tracks[track] = { version, history };
  writeOverrides(o);
  return { track, version, previous: current };
}

/** Points a track back at the version it had before the last change. */
export function rollbackTrack(trackName: string) {
  const track = checkTrack(trackName);
  const o = readOverrides();
  const entry = o.tracks[track];
  const previous = entry?.history.at(-1);
  if (!entry || !previous) throw new AppError('conflict', `Track ${track} has no earlier version to roll back to.`);
  const from = entry.version;
  o.tracks[track] = { version: previous, history: entry.history.slice(0, -1) };
  writeOverrides(o);
  return { track, version: previous, rolled_back_from: from };
}
