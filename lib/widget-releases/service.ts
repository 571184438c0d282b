import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { getDb } from '../../db/client';
import { insertMissingTrackPointers, listTrackPointers, moveTrackPointer, rollBackTrackPointer, type TrackPointer } from '../../db/queries/widget-tracks';
import { AppError } from '../core/errors';
import { onInvalidation, publishInvalidation } from '../cache/invalidation';
import { getEnv } from '../env';
import { getRedis } from '../redis/client';
import { processSingleton } from '../core/process';
import { describeIssues, issueParams } from '../zod-issues';
import { rcompare } from 'semver';

/**
 * Widget releases: immutable bundles listed in lib/widget/releases.json (with their SRI hashes)
 * and three tracks. A track's default version is in releases.json (what a deployment ships);
 * operators repoint a track at run time (`widget track set` / `widget track rollback`), which
 * writes the `widget_tracks` table, so every instance serves the same pointer (docs/contracts.md §9).
 *
 * Each process caches the pointers for CACHE_MS; a change is also announced on the invalidation
 * bus ('widget-track'), which with REDIS_URL reaches every instance at once.
 */
export const TRACKS = ['stable', 'beta', 'lts'] as const;
export type Track = (typeof TRACKS)[number];

const CACHE_MS = 5000;
const TOPIC = 'widget-track';

const Release = z.object({
  version: z.string(),
  url: z.string(),
  integrity: z.string(),
  min_server_version: z.string(),
  released_at: z.string(),
  // Provenance (CONTRIBUTING.md (style)): `node scripts/widget.mjs verify` rebuilds the bundle from this commit.
  source_commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .optional(),
  toolchain: z.object({ esbuild: z.string() }).optional(),
});
const Releases = z.object({ releases: z.array(Release), tracks: z.record(z.string(), z.string()) });
/** The pointer file of earlier versions (DATA_DIR/widget-tracks.json), migrated into the table. */
const PointerFile = z.object({ tracks: z.record(z.string(), z.object({ version: z.string(), history: z.array(z.string()) })) });
type Release = z.infer<typeof Release>;
type Snapshot = { releases: z.infer<typeof Releases>; pointers: Map<string, TrackPointer> };

type State = { cached?: { at: number; snapshot: Promise<Snapshot> }; migrated?: Promise<void>; listening?: boolean };
function state(): State {
  return processSingleton('svc.widget-tracks', (): State => ({}));
}

function readReleases() {
  return Releases.parse(JSON.parse(fs.readFileSync(path.join(process.cwd(), 'lib', 'widget', 'releases.json'), 'utf8')));
}

let versions: string[] | undefined;
/** The released bundle versions, newest first: the one reader of lib/widget/releases.json for the rest of the app. */
export function releasedVersions(): string[] {
  versions ??= readReleases()
    .releases.map((r) => r.version)
    .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
  return versions;
}

/**
 * Once per process: pointers of an old DATA_DIR/widget-tracks.json are copied into the table
 * (rows already there win: another instance or a later CLI run set them), then the file is
 * renamed to widget-tracks.json.migrated so it is never read again.
 */
function migratePointerFile(): Promise<void> {
  const s = state();
  s.migrated ??= (async () => {
    const file = path.resolve(getEnv().DATA_DIR, 'widget-tracks.json');
    if (!fs.existsSync(file)) return;
    const parsed = PointerFile.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    if (!parsed.success) throw new Error(`${file} is not a widget track pointer file: ${describeIssues(issueParams(parsed.error).slice(0, 1))}`);
    const pointers = Object.entries(parsed.data.tracks)
      .filter(([track]) => (TRACKS as readonly string[]).includes(track))
      .map(([track, p]) => ({ track, version: p.version, history: p.history }));
    await insertMissingTrackPointers(await getDb(), pointers);
    fs.renameSync(file, `${file}.migrated`);
  })();
  s.migrated.catch(() => {
    s.migrated = undefined;
  });
  return s.migrated;
}

function snapshot(fresh = false): Promise<Snapshot> {
  const s = state();
  if (!s.listening) {
    s.listening = true;
    onInvalidation(TOPIC, () => {
      s.cached = undefined;
    });
  }
  if (!fresh && s.cached && Date.now() - s.cached.at < CACHE_MS) return s.cached.snapshot;
  const loading = (async () => {
    await migratePointerFile();
    const pointers = await listTrackPointers(await getDb());
    return { releases: readReleases(), pointers: new Map(pointers.map((p) => [p.track, p])) };
  })();
  s.cached = { at: Date.now(), snapshot: loading };
  loading.catch(() => {
    if (s.cached?.snapshot === loading) s.cached = undefined;
  });
  return loading;
}

const versionOf = (snap: Snapshot, track: Track) => snap.pointers.get(track)?.version ?? snap.releases.tracks[track]!;

export type Manifest = Release & { track?: Track; pin?: string };

/** tracks/<track> or versions/<2.0 | 2.0.5>: the manifest, or null when nothing matches. */
export async function resolveManifest(kind: string, name: string): Promise<Manifest | null> {
  if (kind === 'tracks' && (TRACKS as readonly string[]).includes(name)) {
    const snap = await snapshot();
    const v = versionOf(snap, name as Track);
    const r = snap.releases.releases.find((x) => x.version === v);
    return r ? { ...r, track: name as Track } : null;
  }
  if (kind === 'versions' && /^\d+\.\d+(\.\d+)?$/.test(name)) {
    const { releases } = readReleases();
    const matching = releases.filter((r) => r.version === name || r.version.startsWith(`${name}.`)).sort((a, b) => rcompare(a.version, b.version));
    const r = name.split('.').length === 3 ? releases.find((x) => x.version === name) : matching[0];
    return r ? { ...r, pin: name } : null;
  }
  return null;
}

/** The version each track serves now (its stored pointer, else the shipped default). */
export async function trackVersions(): Promise<Record<Track, string>> {
  const snap = await snapshot();
  return Object.fromEntries(TRACKS.map((t) => [t, versionOf(snap, t)])) as Record<Track, string>;
}

function checkTrack(track: string): Track {
  if (!(TRACKS as readonly string[]).includes(track)) throw new AppError('invalid_request', `track must be one of ${TRACKS.join(', ')}`);
  return track as Track;
}

/** Tells every instance; a fresh CLI process waits (≤ 1 s) for its Redis connection first. */
async function announce(track: Track): Promise<void> {
  state().cached = undefined;
  const redis = getRedis();
  if (redis && redis.status !== 'ready') {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 1000);
      redis.once('ready', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  await publishInvalidation(TOPIC, track);
}

/** Points a track at a released version; the previous one is kept for rollback. */
export async function setTrack(trackName: string, version: string) {
  const track = checkTrack(trackName);
  const snap = await snapshot(true);
  if (!snap.releases.releases.some((r) => r.version === version)) throw new AppError('not_found', `No released widget version ${version}.`);
  const moved = await moveTrackPointer(await getDb(), track, version, versionOf(snap, track));
  await announce(track);
  return { track, version: moved.version, previous: moved.previous };
}

/** Points a track back at the version it had before the last change. */
export async function rollbackTrack(trackName: string) {
  const track = checkTrack(trackName);
  await migratePointerFile();
  const moved = await rollBackTrackPointer(await getDb(), track);
  if (!moved) throw new AppError('conflict', `Track ${track} has no earlier version to roll back to.`);
  await announce(track);
  return { track, version: moved.version, rolled_back_from: moved.rolledBackFrom };
}
