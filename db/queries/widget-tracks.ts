import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { widgetTracks } from '../schema';

/** Widget release track pointers (deployment-wide: no account). */
export type TrackPointer = { track: string; version: string; history: string[] };

const HISTORY_KEPT = 20;

export async function listTrackPointers(db: Db): Promise<TrackPointer[]> {
  return db.select({ track: widgetTracks.track, version: widgetTracks.version, history: widgetTracks.history }).from(widgetTracks);
}

/**
 * Points `track` at `version` in one statement (concurrent CLI runs cannot lose a step). The
 * version it had (`current` when the row is new: the shipped default) joins the history.
 */
export async function moveTrackPointer(db: Db, track: string, version: string, current: string): Promise<{ version: string; previous: string }> {
  const [row] = await rows<{ version: string; previous: string }>(
    db,
    sql`
    INSERT INTO widget_tracks AS t (track, version, history) VALUES (${track}, ${version}, ARRAY[${current}]::text[])
    ON CONFLICT (track) DO UPDATE SET version = excluded.version,
      history = (t.history || t.version)[greatest(1, cardinality(t.history) + 2 - ${HISTORY_KEPT}):],
      updated_at = now()
    RETURNING version, history[cardinality(history)] AS previous`,
  );
  return row!;
}

/** Points `track` back at the last version of its history; null when there is none. */
export async function rollBackTrackPointer(db: Db, track: string): Promise<{ version: string; rolledBackFrom: string } | null> {
  const [row] = await rows<{ version: string; rolled_back_from: string }>(
    db,
    sql`
    WITH old AS (SELECT version FROM widget_tracks WHERE track = ${track} AND cardinality(history) > 0 FOR UPDATE)
    UPDATE widget_tracks SET version = history[cardinality(history)], history = history[1:cardinality(history) - 1], updated_at = now()
    FROM old WHERE widget_tracks.track = ${track}
    RETURNING widget_tracks.version, old.version AS rolled_back_from`,
  );
  return row ? { version: row.version, rolledBackFrom: row.rolled_back_from } : null;
}

/** Adds pointers that have no row yet (migrating the old pointer file); existing rows win. */
export async function insertMissingTrackPointers(db: Db, pointers: TrackPointer[]): Promise<number> {
  if (pointers.length === 0) return 0;
  const inserted = await db
    .insert(widgetTracks)
    .values(pointers.map((p) => ({ ...p, history: p.history.slice(-HISTORY_KEPT) })))
    .onConflictDoNothing()
    .returning({ track: widgetTracks.track });
  return inserted.length;
}
