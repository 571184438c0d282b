/**
 * Customer API export (docs/contracts.md §10): NDJSON equals walking every list page (same records, same
 * order) across keyset pages; CSV parses back (RFC 4180) with awkward values; include=messages
 * equals GET /conversation/{id}; rows written during an export neither appear nor appear twice;
 * invalid parameters are 400s; other tenants never appear; 405 for POST; both doors; the session.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'csv-stringify/sync';
import { sql } from 'drizzle-orm';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine, type ResponseLine } from '../helpers/builders';
import { assertParamError, CONVERSATION_FIELDS, RESPONSE_FIELDS, ts, V2, walkPages, type Rec } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';

let server: TestServer;
let setDirectApiEnabled: (on: boolean) => void;
let setExportKeysetOnly: (on: boolean) => void;
let big: Awaited<ReturnType<typeof bigAccount>>;
before(async () => {
  server = await startTestServer();
  ({ setDirectApiEnabled } = await import('../../lib/customer-api/direct-door'));
  ({ setExportKeysetOnly } = await import('../../lib/export/service'));
  big = await bigAccount();
});
after(async () => {
  setDirectApiEnabled?.(true);
  setExportKeysetOnly?.(false);
  await server?.close();
});

/** More rows than one keyset page (1,000), with ties in every sort key. */
const N = 2300;

async function bigAccount() {
  const acct = await createTestAccount();
  const channels = await newChannelIds(3);
  const convs = Array.from({ length: 40 }, (_, i) =>
    conversationLine({
      channel_id: channels[i % 3]!,
      title: i % 5 === 0 ? `Billing ${i}` : `Chat ${i}`,
      created_at: ts((i % 7) * 60),
      updated_at: ts(5000 + (i % 4) * 60),
    }),
  );
  const responses: ResponseLine[] = Array.from({ length: N }, (_, i) =>
    responseLine(convs[i % 40]!, {
      created_at: ts(10_000 + (i % 50) * 60),
      likes: i % 4,
      dislikes: i % 3,
      comments: i % 2,
      question: i % 9 === 0 ? `How do I export ${i}?` : `Question ${i}`,
      answer: `Answer ${i} ${'x'.repeat(i % 13)}`,
    }),
  );
  await importLines(acct.accountId, [...convs, ...responses]);
  return { acct, channels, convs, responses, get: api(server.url, acct.key) };
}

type Raw = { status: number; headers: Headers; text: string };
async function raw(pathAndQuery: string, headers: Record<string, string>, init: RequestInit = {}): Promise<Raw> {
  const res = await fetch(`${server.url}${pathAndQuery}`, { ...init, headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function ndjson(text: string): Rec[] {
  assert.ok(text === '' || text.endsWith('\n'), 'every line ends with a newline');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
}

/** A small RFC 4180 reader: quoted fields may hold commas, quotes ("") and line breaks; records end in CRLF. */
function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') {
        quoted = false;
        i++;
        continue;
      }
      field += ch;
      i++;
      continue;
    }
    if (ch === '"' && field === '') {
      quoted = true;
      i++;
      continue;
    }
    if (ch === ',') {
      row.push(field);
      field = '';
      i++;
      continue;
    }
    if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      out.push(row);
      row = [];
      field = '';
      i += 2;
      continue;
    }
    assert.notEqual(ch, '\n', `bare LF outside quotes at ${i}`);
    field += ch;
    i++;
  }
  assert.equal(field, '', 'the last record ends with CRLF');
  assert.equal(row.length, 0);
  return out;
}

describe('export equals the list, all pages, same order', () => {
  const cases = [
    '',
    'order_by=likes&sort=ASC',
    'sortBy=comments&sortOrder=DESC',
    'order_by=id&sort=ASC',
    'order_by=conversation_id',
    'query=export',
    'order_by=dislikes&sort=ASC&query=Answer 1',
  ];
  for (const q of cases) {
    it(`responses: ${q || '(defaults)'}`, async () => {
      const auth = { authorization: `Bearer ${big.acct.key}` };
      const res = await raw(`${V2}/response/export?${q}`, auth);
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
      assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="responses-\d{8}-\d{6}\.ndjson"$/);
      const exported = ndjson(res.text);
      const { records } = await walkPages(big.get, `${V2}/response?${q}${q ? '&' : ''}resultsPerPage=100`, 100);
      assert.equal(exported.length, records.length);
      assert.deepEqual(exported, records);
      if (!q) assert.equal(exported.length, N);
    });
  }

  for (const q of ['', 'order_by=response_count&sort=ASC', 'order_by=updated_at', 'query=billing', `channel_id=0`]) {
    it(`conversations: ${q || '(defaults)'}`, async () => {
      const query = q === 'channel_id=0' ? `channel_ids[]=${big.channels[1]}&order_by=created_at&sort=ASC` : q;
      const exported = ndjson((await raw(`${V2}/conversation/export?${query}`, { authorization: `Bearer ${big.acct.key}` })).text);
      const { records } = await walkPages(big.get, `${V2}/conversation?${query}${query ? '&' : ''}resultsPerPage=7`, 100);
      assert.ok(records.length > 0);
      assert.deepEqual(exported, records);
    });
  }

  it('a filter with no match is an empty body, and the page parameters are ignored', async () => {
    const auth = { authorization: `Bearer ${big.acct.key}` };
    const none = await raw(`${V2}/response/export?query=nothing-matches-this`, auth);
    assert.equal(none.status, 200);
    assert.equal(none.text, '');
    const paged = ndjson((await raw(`${V2}/response/export?page=3&resultsPerPage=5&pageSize=2`, auth)).text);
    assert.equal(paged.length, N);
  });
});

describe('CSV', () => {
  it('has a header row and RFC 4180 quoting that parses back to the NDJSON values', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch!, title: 'Quotes "inside", commas, and\nnewlines — ünïcödé 🚀' });
    const awkward = ['He said "hi", then left', 'line one\nline two\r\nline three', 'comma,separated', 'ünïcödé 🚀 日本語', '"', ''];
    const responses = awkward.map((text, i) => responseLine(conv, { question: text || 'empty answer', answer: text, created_at: ts(i) }));
    await importLines(acct.accountId, [conv, ...responses]);
    const auth = { authorization: `Bearer ${acct.key}` };
    const csv = await raw(`${V2}/response/export?format=csv`, auth);
    assert.equal(csv.status, 200);
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="responses-\d{8}-\d{6}\.csv"$/);
    const [header, ...rows] = parseCsv(csv.text);
    assert.deepEqual(header, RESPONSE_FIELDS);
    const records = ndjson((await raw(`${V2}/response/export`, auth)).text);
    assert.equal(rows.length, records.length);
    rows.forEach((row, i) => {
      assert.deepEqual(
        row,
        header!.map((k) => String(records[i]![k])),
      );
    });
    assert.deepEqual(new Set(rows.map((r) => r[3])), new Set(awkward));

    const conversations = parseCsv((await raw(`${V2}/conversation/export?format=csv`, auth)).text);
    assert.deepEqual(conversations[0], CONVERSATION_FIELDS);
    assert.equal(conversations[1]![2], conv.title);
    assert.equal(conversations[1]![4], String(awkward.length));
  });

  it('neutralises formula-like text cells (OWASP) on every path; numbers and NDJSON are never changed', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const cases: Array<[string, string]> = [
      ['=1+2', "'=1+2"],
      ['+1', "'+1"],
      ['-1.5', "'-1.5"],
      ['-', "'-"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['\tx', "'\tx"],
      ['\rx', "'\rx"],
      ['=HYPERLINK("http://x","y")', `'=HYPERLINK("http://x","y")`],
      ['a=1', 'a=1'],
      [' =1', ' =1'],
      ['1-2', '1-2'],
      ["'=already", "'=already"],
      ['\n=1', '\n=1'],
      ['', ''],
      ['１', '１'],
    ];
    const conv = conversationLine({ channel_id: ch!, title: '=cmd|calc', channel_name: '@desk', status: '-open' });
    const responses = cases.map(([text], i) => responseLine(conv, { question: `q${i}`, answer: text, created_at: ts(i), likes: i }));
    await importLines(acct.accountId, [conv, ...responses]);
    const auth = { authorization: `Bearer ${acct.key}` };
    const paths = server.kind === 'postgres' ? [false, true] : [true];
    for (const keysetOnly of paths) {
      setExportKeysetOnly(keysetOnly);
      try {
        const [, ...rows] = parseCsv((await raw(`${V2}/response/export?format=csv&order_by=created_at&sort=ASC`, auth)).text);
        assert.deepEqual(
          rows.map((r) => r[3]),
          cases.map(([, out]) => out),
          `keyset only: ${keysetOnly}`,
        );
        assert.deepEqual(
          rows.map((r) => r[7]),
          cases.map((_, i) => String(i)),
          'numbers are written as they are',
        );
        const [, c] = parseCsv((await raw(`${V2}/conversation/export?format=csv`, auth)).text);
        assert.deepEqual([c![2], c![3], c![6]], ["'=cmd|calc", "'-open", "'@desk"]);
        const lines = ndjson((await raw(`${V2}/response/export?order_by=created_at&sort=ASC`, auth)).text);
        assert.deepEqual(
          lines.map((l) => l.answer),
          cases.map(([text]) => text),
          'NDJSON keeps every value',
        );
      } finally {
        setExportKeysetOnly(false);
      }
    }
  });

  it('of an empty selection is the header row alone... or nothing', async () => {
    const res = await raw(`${V2}/response/export?format=csv&query=nothing-matches-this`, { authorization: `Bearer ${big.acct.key}` });
    assert.equal(res.status, 200);
    assert.ok(res.text === '' || parseCsv(res.text).length === 1);
  });
});

describe('include=messages', () => {
  it('gives each conversation exactly as GET /conversation/{id}', async () => {
    const res = await raw(`${V2}/conversation/export?include=messages&order_by=response_count&sort=DESC`, { authorization: `Bearer ${big.acct.key}` });
    assert.equal(res.status, 200);
    const lines = ndjson(res.text);
    assert.equal(lines.length, big.convs.length);
    for (const line of lines.slice(0, 8)) {
      const one = await big.get(`${V2}/conversation/${line.conversation_id as string}`);
      assert.deepEqual(line, one.body);
    }
    const total = lines.reduce((n, l) => n + (l.messages as unknown[]).length, 0);
    assert.equal(total, 2 * N);
  });
});

/** Values that JSON, CSV and SQL each treat specially (the COPY path builds lines in SQL). */
const AWKWARD = [
  'He said "hi", then left',
  'back\\slash \\n \\u0041 not escapes',
  'line one\nline two\r\nline three\rcr only',
  'comma,separated',
  'ünïcödé 🚀 日本語 👩‍👩‍👧 é',
  '"',
  '""',
  ',',
  '\\',
  '',
  '  leading and trailing  ',
  '\u0001\u0002\u0008\u000b\u000c\u001f\u007f controls',
  '\t tab',
  '\u2028\u2029 separators',
  '</script><script>alert(1)</script>',
  "'; DROP TABLE responses; --",
  "$1 $$ $tag$ E'\\'",
  '{"json":"inside"}',
  '=1+2 formula',
  `long ${'a'.repeat(3000)}`,
  'null',
  '0',
  '-1.5e10',
];

async function awkwardAccount() {
  const acct = await createTestAccount();
  const channels = await newChannelIds(2);
  const names = ['Support, "EU" \\ desk\n🚀', 'Ünïcödé\ttab'];
  const convs = AWKWARD.map((title, i) =>
    conversationLine({
      channel_id: channels[i % 2]!,
      channel_name: names[i % 2]!,
      title: title.slice(0, 300) || 'untitled',
      status: i % 3 ? 'Open' : 'Closed, "done"',
      created_at: ts((i % 5) * 60),
      updated_at: ts(1000 + (i % 4) * 60),
    }),
  );
  const responses = AWKWARD.flatMap((text, i) =>
    [0, 1].map((j) =>
      responseLine(convs[(i + j) % convs.length]!, {
        question: `${text}?`,
        answer: text,
        created_at: ts(2000 + ((i + j) % 6) * 60),
        likes: j ? 2147483647 : i % 3,
        dislikes: (i * j) % 2,
        comments: j ? 0 : 2147483646,
      }),
    ),
  );
  await importLines(acct.accountId, [...convs, ...responses]);
  // Attachments on some messages (as the widget's uploads leave them), with awkward names.
  const { getDb } = await import('../../db/client');
  const db = await getDb();
  let n = 0;
  for (const r of responses.slice(0, 12)) {
    for (const column of ['question_message_id', 'answer_message_id'] as const) {
      if (n % 3 === 2) {
        n++;
        continue;
      }
      const name = `${AWKWARD[n % AWKWARD.length] || 'file'}.txt`;
      await db.execute(sql`INSERT INTO attachments (id, account_id, conversation_id, message_id, filename, content_type, size, created_at)
        SELECT ${randomUUID()}, ${acct.accountId}, r.conversation_id, r.${sql.raw(column)}, ${name}, ${'text/plain; charset="utf-8"'}, ${n * 1000 + 1},
          timestamptz '2026-01-02 00:00:00+00' + ${n % 4} * interval '1 minute'
        FROM responses r WHERE r.id = ${r.response_id}`);
      n++;
    }
  }
  return { acct, channels, convs, responses, get: api(server.url, acct.key) };
}

/** The expected CSV, written independently of the service: OWASP's formula rule on text cells, then RFC 4180. */
const owasp = (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v);
const CSV_OPTIONS = { record_delimiter: '\r\n', quoted_match: /[\r\n]/, cast: { string: owasp, boolean: String } };
const RESPONSE_SORTS = ['created_at', 'response_id', 'id', 'channel_id', 'conversation_id', 'likes', 'dislikes', 'comments'];
const CONVERSATION_SORTS = ['created_at', 'conversation_id', 'id', 'channel_id', 'updated_at', 'response_count'];

describe('awkward values: every sort and filter, both paths, both formats', () => {
  let w: Awaited<ReturnType<typeof awkwardAccount>>;
  before(async () => {
    w = await awkwardAccount();
  });
  const auth = () => ({ authorization: `Bearer ${w.acct.key}` });

  /** The body on PostgreSQL's COPY path and, there, also on the keyset path: byte-identical. */
  async function body(path: string): Promise<string> {
    const res = await raw(path, auth());
    assert.equal(res.status, 200, res.text.slice(0, 300));
    if (server.kind === 'postgres') {
      setExportKeysetOnly(true);
      try {
        const keyset = await raw(path, auth());
        assert.equal(res.text, keyset.text, `COPY and keyset bodies differ for ${path}`);
      } finally {
        setExportKeysetOnly(false);
      }
    }
    return res.text;
  }

  it('responses: NDJSON equals the list and CSV equals csv-stringify of those records', async () => {
    const filters = [
      '',
      `channel_id=${w.channels[0]}`,
      `conversation_id=${w.convs[3]!.conversation_id}`,
      'query=🚀',
      'query="',
      'query=\\',
      `query=${encodeURIComponent('line two\r\n')}`,
      `updated_since=${encodeURIComponent('2000-01-01 00:00:00')}`,
      'query=no-such-text-anywhere',
    ];
    const cases = [...RESPONSE_SORTS.flatMap((k) => [`order_by=${k}&sort=ASC`, `order_by=${k}&sort=DESC`]), ...filters];
    for (const q of cases) {
      const exported = ndjson(await body(`${V2}/response/export?${q}`));
      const { records } = await walkPages(w.get, `${V2}/response?${q}${q ? '&' : ''}resultsPerPage=9`, 100);
      assert.deepEqual(exported, records, q);
      if (!q) assert.equal(exported.length, w.responses.length);
      const csv = await body(`${V2}/response/export?format=csv&${q}`);
      const columns = RESPONSE_FIELDS;
      assert.equal(csv, stringify(records, { ...CSV_OPTIONS, header: true, columns }), q);
    }
  });

  it('conversations: NDJSON equals the list and CSV equals csv-stringify of those records', async () => {
    const filters = ['', `channel_id=${w.channels[1]}`, 'query=ünïcödé', 'query=support', `updated_since=${encodeURIComponent('2026-01-01 00:17:00')}`];
    const cases = [...CONVERSATION_SORTS.flatMap((k) => [`order_by=${k}&sort=ASC`, `order_by=${k}&sort=DESC`]), ...filters];
    for (const q of cases) {
      const exported = ndjson(await body(`${V2}/conversation/export?${q}`));
      const { records } = await walkPages(w.get, `${V2}/conversation?${q}${q ? '&' : ''}resultsPerPage=8`, 100);
      assert.ok(records.length > 0, q);
      assert.deepEqual(exported, records, q);
      const csv = await body(`${V2}/conversation/export?format=csv&${q}`);
      const columns = CONVERSATION_FIELDS;
      assert.equal(csv, stringify(records, { ...CSV_OPTIONS, header: true, columns }), q);
    }
  });

  it('include=messages: each line is GET /conversation/{id}, attachments and their url included', async () => {
    for (const q of ['', 'order_by=response_count&sort=ASC', 'query=🚀']) {
      const lines = ndjson(await body(`${V2}/conversation/export?include=messages&${q}`));
      assert.ok(lines.length > 0);
      for (const line of lines) assert.deepEqual(line, (await w.get(`${V2}/conversation/${line.conversation_id as string}`)).body, q);
      if (!q) {
        const attachments = lines.flatMap((l) => (l.messages as Rec[]).flatMap((m) => m.attachments as Rec[]));
        assert.equal(attachments.length, 16);
        for (const a of attachments) assert.equal(a.url, `${V2}/attachments/${a.upload_id as string}`);
      }
    }
  });

  it('hostile search text is only ever a value: the export equals the list and the tables are intact', async () => {
    const hostile = [
      "'",
      "''",
      '\\',
      "\\'",
      "'; DROP TABLE responses; --",
      "') OR true --",
      '$1',
      '$$',
      "$$'",
      '%',
      '_',
      "E'\\''",
      '*/ SELECT 1 /*',
      '\u00a0',
      'DROP',
      '🚀\'"\\',
    ];
    for (const h of hostile) {
      for (const path of ['response', 'conversation']) {
        const q = `query=${encodeURIComponent(h)}`;
        const exported = ndjson(await body(`${V2}/${path}/export?${q}`));
        const { records } = await walkPages(w.get, `${V2}/${path}?${q}&resultsPerPage=50`, 100);
        assert.deepEqual(exported, records, `${path} ${JSON.stringify(h)}`);
      }
    }
    assert.equal(ndjson(await body(`${V2}/response/export`)).length, w.responses.length);
    assert.equal(ndjson((await raw(`${V2}/response/export`, { authorization: `Bearer ${big.acct.key}` })).text).length, N);
  });
});

describe('writes during an export', () => {
  it('neither appear nor appear twice: the export reads one snapshot', async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    // Large answers: several megabytes, far more than the sockets buffer, so the export is mid-way.
    const before = Array.from({ length: 3000 }, (_, i) => responseLine(conv, { created_at: ts(i), answer: `${i} ${'a'.repeat(2000)}` }));
    await importLines(acct.accountId, [conv, ...before]);
    const res = await fetch(`${server.url}${V2}/response/export?order_by=created_at&sort=ASC`, { headers: { authorization: `Bearer ${acct.key}` } });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    const chunks: Uint8Array[] = [first.value!];
    // Interleaved: new rows at both ends of the order while the export is still being read.
    const later = Array.from({ length: 50 }, (_, i) => responseLine(conv, { created_at: i % 2 ? ts(-1000 - i) : ts(100_000 + i) }));
    let inserted = false;
    const insert = importLines(acct.accountId, later).then(() => {
      inserted = true;
    });
    // PostgreSQL: the writer does not wait for the export, held open by this reader (bounded: a writer that waited fails here).
    if (server.kind === 'postgres') await Promise.race([insert, new Promise((r) => setTimeout(r, 30_000))]);
    let readAfterInsert = false;
    for (;;) {
      await new Promise((r) => setTimeout(r, 5)); // a slow reader
      const { done, value } = await reader.read();
      if (done) break;
      if (inserted) readAfterInsert = true;
      chunks.push(value);
    }
    await insert;
    const records = ndjson(Buffer.concat(chunks).toString('utf8'));
    assert.equal(records.length, before.length);
    assert.equal(new Set(records.map((r) => r.response_id)).size, before.length);
    assert.deepEqual(
      records.map((r) => r.response_id),
      before.map((r) => r.response_id),
    );
    // PostgreSQL: the writer did not wait for the export (it ran inside it); PGlite has one session, so it waits.
    if (server.kind === 'postgres') assert.ok(readAfterInsert, 'the insert finished while the export was still being read');
    const again = ndjson(await (await fetch(`${server.url}${V2}/response/export`, { headers: { authorization: `Bearer ${acct.key}` } })).text());
    assert.equal(again.length, before.length + later.length);
  });

  it('a client that goes away mid-export ends it (the next export still answers)', async () => {
    const ctrl = new AbortController();
    const res = await fetch(`${server.url}${V2}/response/export`, { headers: { authorization: `Bearer ${big.acct.key}` }, signal: ctrl.signal });
    await res.body!.getReader().read();
    ctrl.abort();
    const next = await raw(`${V2}/response/export?query=export`, { authorization: `Bearer ${big.acct.key}` });
    assert.equal(next.status, 200);
    assert.ok(ndjson(next.text).length > 0);
  });
});

/** The export statements of this database that PostgreSQL is running now, and what each waits on. */
async function runningExports(): Promise<Array<{ pid: number; wait_event: string | null }>> {
  const { getDb, rows } = await import('../../db/client');
  return rows(
    await getDb(),
    sql`SELECT pid, wait_event FROM pg_stat_activity
    WHERE datname = current_database() AND state = 'active' AND query LIKE 'COPY (SELECT%' AND pid <> pg_backend_pid()`,
  );
}

async function until<T>(what: string, probe: () => Promise<T | null>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    assert.ok(Date.now() < end, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('PostgreSQL: back-pressure and cancellation of the COPY statement', () => {
  let acct: Awaited<ReturnType<typeof createTestAccount>>;
  let count = 0;
  before(async () => {
    if (server.kind !== 'postgres') return;
    acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    // ~48 MB of NDJSON: more than every socket buffer between PostgreSQL and the client holds.
    const lines = Array.from({ length: 6000 }, (_, i) => responseLine(conv, { created_at: ts(i), answer: `${i} ${'b'.repeat(8000)}` }));
    count = lines.length;
    await importLines(acct.accountId, [conv, ...lines]);
  });

  it('a reader that stops reading stops PostgreSQL (it waits to write), and the export then completes', async (t) => {
    if (server.kind !== 'postgres') return t.skip('PostgreSQL only');
    const res = await fetch(`${server.url}${V2}/response/export`, { headers: { authorization: `Bearer ${acct.key}` } });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [(await reader.read()).value!]; // the first chunk
    // Not reading: the statement must end up blocked on its socket, not buffered into this process.
    const blocked = await until('the COPY to wait on ClientWrite', async () => {
      const running = await runningExports();
      return running.length === 1 && running[0]!.wait_event === 'ClientWrite' ? running[0]! : null;
    });
    assert.ok(blocked.pid > 0);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await runningExports())[0]?.wait_event, 'ClientWrite', 'still waiting for the reader');
    // Read the rest line by line (nothing kept but the ids): every record, once.
    const decoder = new TextDecoder();
    let tail = decoder.decode(chunks[0], { stream: true });
    const ids: string[] = [];
    const take = () => {
      const lines = tail.split('\n');
      tail = lines.pop()!;
      for (const l of lines) ids.push((JSON.parse(l) as Rec).response_id as string);
    };
    take();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      tail += decoder.decode(value, { stream: true });
      take();
    }
    assert.equal(tail, '');
    assert.equal(ids.length, count);
    assert.equal(new Set(ids).size, count);
    await until('the statement to end', async () => ((await runningExports()).length === 0 ? true : null));
  });

  it('a client that disconnects mid-export cancels the statement and frees its connection', async (t) => {
    if (server.kind !== 'postgres') return t.skip('PostgreSQL only');
    for (const door of [true, false]) {
      setDirectApiEnabled(door);
      try {
        const ctrl = new AbortController();
        const res = await fetch(`${server.url}${V2}/response/export`, { headers: { authorization: `Bearer ${acct.key}` }, signal: ctrl.signal });
        await res.body!.getReader().read();
        await until('the COPY to run', async () => ((await runningExports()).length === 1 ? true : null));
        ctrl.abort();
        await until('the COPY to end after the disconnect', async () => ((await runningExports()).length === 0 ? true : null));
      } finally {
        setDirectApiEnabled(true);
      }
    }
    const again = await raw(`${V2}/response/export?order_by=id`, { authorization: `Bearer ${acct.key}` });
    assert.equal(ndjson(again.text).length, count);
  });
});

describe('errors, tenancy, methods, doors, session', () => {
  it('invalid parameters are 400 problem+json naming the parameter', async () => {
    const get = big.get;
    assertParamError(await get(`${V2}/response/export?format=gridjs`), 'format');
    assertParamError(await get(`${V2}/response/export?format=xml`), 'format');
    assertParamError(await get(`${V2}/response/export?order_by=title`), 'order_by');
    assertParamError(await get(`${V2}/response/export?sortOrder=up`), 'sortOrder');
    assertParamError(await get(`${V2}/response/export?conversation_id=nope`), 'conversation_id');
    assertParamError(await get(`${V2}/conversation/export?include=responses`), 'include');
    assertParamError(await get(`${V2}/conversation/export?include=messages&format=csv`), 'include');
    assertParamError(await get(`${V2}/conversation/export?channel_id=abc`), 'channel_id');
  });

  it("never shows another account's data and needs a key", async () => {
    const other = await createTestAccount();
    const auth = { authorization: `Bearer ${other.key}` };
    assert.equal((await raw(`${V2}/response/export`, auth)).text, '');
    assert.equal((await raw(`${V2}/conversation/export?include=messages`, auth)).text, '');
    assert.equal((await raw(`${V2}/response/export?conversation_id=${big.convs[0]!.conversation_id}`, auth)).text, '');
    const none = await raw(`${V2}/response/export`, {});
    assert.equal(none.status, 401);
  });

  it('405 for POST, with Allow', async () => {
    for (const p of ['/response/export', '/conversation/export']) {
      const res = await raw(`${V2}${p}`, { authorization: `Bearer ${big.acct.key}` }, { method: 'POST', body: '{}' });
      assert.equal(res.status, 405);
      assert.match(res.headers.get('allow') ?? '', /GET/);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
    }
  });

  it('both doors answer the same bytes and headers', async () => {
    const auth = { authorization: `Bearer ${big.acct.key}` };
    for (const p of [`${V2}/response/export?order_by=likes`, `${V2}/conversation/export?format=csv`, `${V2}/conversation/export?include=messages`]) {
      setDirectApiEnabled(true);
      const direct = await raw(p, auth);
      setDirectApiEnabled(false);
      const viaNext = await raw(p, auth);
      setDirectApiEnabled(true);
      assert.equal(direct.status, 200);
      assert.equal(direct.text, viaNext.text, p);
      for (const h of ['content-type', 'cache-control']) assert.equal(direct.headers.get(h), viaNext.headers.get(h), `${p} ${h}`);
      assert.equal(direct.headers.get('content-disposition')?.replace(/\d/g, '0'), viaNext.headers.get('content-disposition')?.replace(/\d/g, '0'));
    }
  });

  it('answers the dashboard session cookie like a key', async () => {
    const login = await signIn(server.url, big.acct.email, big.acct.password);
    assert.ok(login.ok, String(login.error));
    const viaCookie = await raw(`${V2}/response/export?query=export`, { cookie: login.cookie! });
    const viaKey = await raw(`${V2}/response/export?query=export`, { authorization: `Bearer ${big.acct.key}` });
    assert.equal(viaCookie.status, 200);
    assert.equal(viaCookie.text, viaKey.text);
  });
});
