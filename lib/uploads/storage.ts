import type { Db } from '../../db/client';
import { getUploadChunk, insertUploadChunk } from '../../db/queries/uploads';

/** Bytes per upload_chunks row. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * Writes an upload's bytes as they stream in, one upload_chunks row per CHUNK_BYTES; at most one
 * chunk is held in memory. Each row is its own statement (no transaction spans a slow upload);
 * until the upload is marked complete nothing reads them, and a refusal deletes them all.
 */
export class ChunkWriter {
  private readonly buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private fill = 0;
  private seq = 0;
  bytes = 0;

  constructor(
    private readonly db: Db,
    private readonly uploadId: string,
  ) {}

  async append(data: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < data.length) {
      const n = Math.min(CHUNK_BYTES - this.fill, data.length - offset);
      this.buf.set(data.subarray(offset, offset + n), this.fill);
      this.fill += n;
      offset += n;
      this.bytes += n;
      if (this.fill === CHUNK_BYTES) await this.flush();
    }
  }

  async flush(): Promise<void> {
    if (this.fill === 0) return;
    const chunk = Buffer.from(this.buf.subarray(0, this.fill));
    this.fill = 0;
    await insertUploadChunk(this.db, this.uploadId, this.seq++, chunk);
  }
}

/** An upload's bytes as a stream that reads one chunk row per pull (the reader's pace). */
export function uploadByteStream(db: Db, accountId: number, uploadId: string): ReadableStream<Uint8Array> {
  let seq = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const data = await getUploadChunk(db, accountId, uploadId, seq++);
        if (data) controller.enqueue(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
        else controller.close();
      },
    },
    { highWaterMark: 1 },
  );
}

/** All of an upload's bytes (a document for the extractor; bounded by UPLOAD_MAX_BYTES). */
export async function readUploadBytes(db: Db, accountId: number, uploadId: string): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for (let seq = 0; ; seq++) {
    const data = await getUploadChunk(db, accountId, uploadId, seq);
    if (!data) break;
    parts.push(data);
  }
  return Buffer.concat(parts);
}
