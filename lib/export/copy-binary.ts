/**
 * Reads PostgreSQL's binary COPY format (https://www.postgresql.org/docs/current/sql-copy.html,
 * "Binary Format") of a one-column result and hands back each field's bytes untouched: the
 * export's statements have PostgreSQL build each finished NDJSON or CSV line, so Node only moves
 * bytes (no decode, no escaping: binary COPY carries a text field verbatim, where text COPY would
 * escape its backslashes and newlines). Chunks may split the framing anywhere.
 *
 * Layout: 11-byte signature, int32 flags, int32 extension length + extension; then per tuple an
 * int16 field count and per field an int32 length (-1: NULL) and the bytes; a field count of -1
 * ends the data.
 */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

export class CopyBinaryFormatError extends Error {}

export class CopyBinaryLines {
  private rest: Buffer | null = null;
  private headerRead = false;
  /** True once the trailer (field count -1) was read. */
  ended = false;

  /** Appends the fields of every complete tuple in `chunk` to `out`; returns how many bytes it appended. */
  feed(chunk: Buffer, out: Buffer[]): number {
    if (this.ended) {
      if (chunk.length > 0) throw new CopyBinaryFormatError('data after the binary COPY trailer');
      return 0;
    }
    let buf = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    this.rest = null;
    let at = 0;
    if (!this.headerRead) {
      if (buf.length < 19) {
        this.rest = Buffer.from(buf);
        return 0;
      }
      if (!buf.subarray(0, 11).equals(SIGNATURE)) throw new CopyBinaryFormatError('not a binary COPY stream');
      const ext = buf.readInt32BE(15);
      if (buf.length < 19 + ext) {
        this.rest = Buffer.from(buf);
        return 0;
      }
      at = 19 + ext;
      this.headerRead = true;
    }
    let appended = 0;
    while (at + 2 <= buf.length) {
      const fields = buf.readInt16BE(at);
      if (fields === -1) {
        this.ended = true;
        if (at + 2 !== buf.length) throw new CopyBinaryFormatError('data after the binary COPY trailer');
        return appended;
      }
      if (fields !== 1) throw new CopyBinaryFormatError(`expected one field per tuple, got ${fields}`);
      if (at + 6 > buf.length) break;
      const len = buf.readInt32BE(at + 2);
      if (len < 0) throw new CopyBinaryFormatError('a NULL line');
      if (at + 6 + len > buf.length) break;
      out.push(buf.subarray(at + 6, at + 6 + len));
      appended += len;
      at += 6 + len;
    }
    if (at < buf.length) {
      // Keep the partial tuple (copied: `buf` may be a slice of a larger socket buffer).
      buf = buf.subarray(at);
      this.rest = Buffer.from(buf);
    }
    return appended;
  }

  /** The stream ended: it must have ended exactly at the trailer. */
  finish(): void {
    if (!this.ended || this.rest) throw new CopyBinaryFormatError('the binary COPY stream ended before its trailer');
  }
}
