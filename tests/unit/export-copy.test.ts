/**
 * The PostgreSQL export's two pieces that need no database: the binary COPY reader (any chunking,
 * malformed streams refused) and the inlining of bound values as SQL constants (hostile text
 * stays one constant; only the value kinds the filters bind are accepted).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { CopyBinaryLines, CopyBinaryFormatError } from '../../lib/export/copy-binary';
import { inlineStatement, quoteText } from '../../db/queries/export';
import type { Db } from '../../db/client';

function copyStream(fields: Array<string | null>, ext = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(19);
  Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1').copy(header);
  header.writeInt32BE(0, 11);
  header.writeInt32BE(ext.length, 15);
  const parts = [header, ext];
  for (const f of fields) {
    const head = Buffer.alloc(6);
    head.writeInt16BE(1, 0);
    const bytes = f === null ? null : Buffer.from(f, 'utf8');
    head.writeInt32BE(bytes ? bytes.length : -1, 2);
    parts.push(head, ...(bytes ? [bytes] : []));
  }
  const trailer = Buffer.alloc(2);
  trailer.writeInt16BE(-1, 0);
  parts.push(trailer);
  return Buffer.concat(parts);
}

function readAll(stream: Buffer, chunkSize: number): string {
  const lines = new CopyBinaryLines();
  const out: Buffer[] = [];
  for (let i = 0; i < stream.length; i += chunkSize) lines.feed(stream.subarray(i, i + chunkSize), out);
  lines.finish();
  return Buffer.concat(out).toString('utf8');
}

describe('binary COPY reader', () => {
  const fields = ['{"a":"\\\\ \\n \\""}\n', 'é🚀,"x"\r\n', '', 'x'.repeat(70_000), 'PGCOPY\n\xff\r\n\0'];
  const stream = copyStream(fields, Buffer.from('ext!'));

  it('gives the fields verbatim whatever the chunking', () => {
    for (const size of [1, 2, 3, 5, 7, 19, 20, 64, 1000, 65_536, stream.length]) assert.equal(readAll(stream, size), fields.join(''), `chunks of ${size}`);
  });

  it('refuses a stream that is not binary COPY, a NULL line, a second field, a missing trailer or data after it', () => {
    assert.throws(() => readAll(Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\x01', 'latin1'), stream.subarray(11)]), 64), CopyBinaryFormatError);
    assert.throws(() => readAll(copyStream(['a', null]), 64), CopyBinaryFormatError);
    const two = Buffer.from(copyStream(['a']));
    two.writeInt16BE(2, 19);
    assert.throws(() => readAll(two, 64), CopyBinaryFormatError);
    assert.throws(() => readAll(stream.subarray(0, stream.length - 2), 64), CopyBinaryFormatError);
    assert.throws(() => readAll(Buffer.concat([stream, Buffer.from([0])]), 64), CopyBinaryFormatError);
  });
});

describe('inlining bound values', () => {
  const db = { dialect: new PgDialect() } as unknown as Db;

  it('quotes text as an escape-string constant: quotes doubled, backslashes escaped, nothing else touched', () => {
    assert.equal(quoteText("it's"), "E'it''s'");
    assert.equal(quoteText('a\\b'), "E'a\\\\b'");
    assert.equal(quoteText("\\'; DROP TABLE x; --"), "E'\\\\''; DROP TABLE x; --'");
    assert.equal(quoteText('$1 $$ 🚀\n'), "E'$1 $$ 🚀\n'");
    assert.throws(() => quoteText('a\0b'));
  });

  it('replaces each placeholder by its constant and nothing else', () => {
    const text = inlineStatement(db, sql`SELECT 1 WHERE a = ${7} AND b = ANY(${sql.param([1, 2, 3])}::int[]) AND c ILIKE ${"%'$2\\%"} AND d = ${7n}`);
    assert.equal(text, "SELECT 1 WHERE a = '7' AND b = ANY('{1,2,3}'::int[]) AND c ILIKE E'%''$2\\\\%' AND d = '7'");
  });

  it('refuses values it cannot write safely and a $ that is not a placeholder', () => {
    assert.throws(() => inlineStatement(db, sql`SELECT ${{ a: 1 }}`));
    assert.throws(() => inlineStatement(db, sql`SELECT ${sql.param(['1', "2'"])}`));
    assert.throws(() => inlineStatement(db, sql`SELECT ${Number.NaN}`));
    assert.throws(() => inlineStatement(db, sql`SELECT ${true}`));
    assert.throws(() => inlineStatement(db, sql`SELECT $$x$$`));
  });
});
