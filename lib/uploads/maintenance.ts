import fs from 'node:fs';
import path from 'node:path';
import { getDb } from '../../db/client';
import { deleteStaleUploads, listDiskUploads, moveDiskUploadIntoDatabase } from '../../db/queries/uploads';
import { getEnv } from '../env';
import { CHUNK_BYTES } from './storage';

/** Uploads still 'receiving' after this long belong to a process that died mid-upload. */
const RECEIVING_TTL_MS = 60 * 60 * 1000;
const SWEEP_EVERY_MS = 10 * 60 * 1000;
const SWEEP_BATCH = 200;

/**
 * Deletes uploads never attached within UPLOAD_UNATTACHED_TTL_SECONDS (default a day) and
 * abandoned half-received ones, with their chunks. Safe on every instance at once (SKIP LOCKED).
 */
export async function sweepUploads(now = new Date()): Promise<number> {
  const db = await getDb();
  const unattachedBefore = new Date(now.getTime() - getEnv().UPLOAD_UNATTACHED_TTL_SECONDS * 1000);
  const receivingBefore = new Date(now.getTime() - RECEIVING_TTL_MS);
  let total = 0;
  for (;;) {
    const n = await deleteStaleUploads(db, unattachedBefore, receivingBefore, SWEEP_BATCH);
    total += n;
    if (n < SWEEP_BATCH) return total;
  }
}

/** The directory where uploads lived before they moved into the database. */
export function legacyUploadsDir(): string {
  return path.resolve(getEnv().DATA_DIR, 'uploads');
}

async function* fileChunks(file: string): AsyncIterable<Uint8Array> {
  for await (const chunk of fs.createReadStream(file, { highWaterMark: CHUNK_BYTES })) yield chunk as Buffer;
}

/**
 * Moves uploads stored by earlier versions as DATA_DIR/uploads/<name> files into the database,
 * one transaction per file, then deletes the file. Idempotent: an interrupted run is redone from
 * the file on the next start. A row whose file is not in this instance's DATA_DIR is left as is.
 */
export async function migrateDiskUploads(): Promise<{ moved: number; missing: number }> {
  const dir = legacyUploadsDir();
  if (!fs.existsSync(dir)) return { moved: 0, missing: 0 };
  const db = await getDb();
  let moved = 0;
  const missing = new Set<string>();
  for (;;) {
    const batch = (await listDiskUploads(db, 100 + missing.size)).filter((u) => !missing.has(u.id));
    if (batch.length === 0) break;
    for (const upload of batch) {
      const file = path.join(dir, path.basename(upload.storage_name));
      if (!fs.existsSync(file)) {
        missing.add(upload.id);
        continue;
      }
      if (await moveDiskUploadIntoDatabase(db, upload, () => fileChunks(file))) moved++;
      fs.rmSync(file, { force: true });
    }
  }
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith('.part')) fs.rmSync(path.join(dir, name), { force: true }); // never completed
  }
  if (fs.readdirSync(dir).length === 0) fs.rmdirSync(dir);
  if (missing.size > 0) console.warn(`${missing.size} upload(s) have no file in ${dir}; they stay where they are`);
  return { moved, missing: missing.size };
}

/**
 * At start-up: old disk uploads move into the database; then the sweep runs every 10 minutes
 * (first after a few seconds). Returns the function that stops it.
 */
export async function startUploadMaintenance(): Promise<() => void> {
  const { moved } = await migrateDiskUploads();
  if (moved > 0) console.log(`moved ${moved} upload(s) from ${legacyUploadsDir()} into the database`);
  const run = () => {
    sweepUploads().catch((e) => console.error('upload sweep failed:', (e as Error).message));
  };
  const first = setTimeout(run, 5_000);
  const timer = setInterval(run, SWEEP_EVERY_MS);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
