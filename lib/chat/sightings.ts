import { getDb } from '../../db/client';
import { addSightings, listSightings, type Sighting } from '../../db/queries/sightings';
import { releasedVersions } from '../widget-releases/service';

let known: Set<string> | undefined;

/**
 * The version a connection reports, when it is a real widget release (releases.json, or a legacy
 * 1.0.x); anything else is recorded as "other", so strangers cannot fill the table with names.
 */
export function sightingVersion(reported: unknown): string {
  known ??= new Set(releasedVersions());
  if (typeof reported !== 'string') return 'other';
  return known.has(reported) || /^1\.0\.\d{1,3}$/.test(reported) ? reported : 'other';
}

/**
 * "Where is my widget running": each accepted connection counts once per client, origin,
 * widget version and UTC day. Counted in memory, written in one statement every 15 s.
 */
const pending = new Map<string, Sighting>();
let timer: NodeJS.Timeout | undefined;

export function recordSighting(s: Omit<Sighting, 'day' | 'count'>) {
  const day = new Date().toISOString().slice(0, 10);
  const key = JSON.stringify([s.clientId, s.origin, s.version, day]);
  const current = pending.get(key);
  if (current) current.count++;
  else pending.set(key, { ...s, day, count: 1 });
  if (!timer) {
    timer = setTimeout(() => {
      void flushSightings();
    }, 15_000);
    timer.unref();
  }
}

export async function flushSightings() {
  if (timer) {
    clearTimeout(timer);
    timer = undefined;
  }
  const batch = [...pending.values()];
  pending.clear();
  if (batch.length === 0) return;
  try {
    await addSightings(await getDb(), batch);
  } catch (e) {
    console.error('could not record widget sightings:', (e as Error).message);
  }
}

export async function recentSightings(accountId: number, days = 30) {
  await flushSightings();
  return listSightings(await getDb(), accountId, days);
}
