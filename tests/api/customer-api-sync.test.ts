/**
 * Incremental sync and attachment downloads (issue 12): `updated_since` on both lists and both
 * exports (the boundary second included, strict format, with filters, sorts, paging and links; a
 * like, a comment and a stored answer move records into the window), and GET
 * /customer-api/v2/attachments/{id} (the bytes as uploaded through the widget, the headers,
 * tenancy, bad ids, credentials, both doors, the url on message attachments).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import {
  api,
  conversationLine,
  createTestAccount,
  importLines,
  newChannelIds,
  responseLine,
  type ConversationLine,
  type ResponseLine,
} from '../helpers/builders';
import {
  assertParamError,
  assertProblem,
  assertUnauthorized,
  expectedConversation,
  expectedResponse,
  ids,
  linkParamSet,
  totalOrder,
  ts,
  V2,
  walkPages,
  type Rec,
} from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';
import { signIn } from '../helpers/signin';
import { backendToken, connectVisitor, createTestWidgetClient, upload, type Visitor } from '../helpers/widget';
import { pngOfSize } from '../fixtures/widget-files';

let server: TestServer;
let setDirectApiEnabled: (on: boolean) => void;
before(
  async () => {
    server = await startTestServer({ UPLOADS_PER_VISITOR_PER_MINUTE: '1000' });
    ({ setDirectApiEnabled } = await import('../../lib/customer-api/direct-door'));
  },
  { timeout: 120_000 },
);
after(
  async () => {
    setDirectApiEnabled?.(true);
    await server?.close();
  },
  { timeout: 30_000 },
);

const ORIGIN = 'https://example.com';
const enc = encodeURIComponent;

function ndjson(text: string): Rec[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
}

async function exported(path: string, key: string): Promise<{ status: number; text: string; type: string }> {
  const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '' };
}

/** Sets responses' updated_at as the product would have at those times (answers and likes are minutes apart here). */
async function setResponseUpdatedAt(byId: Map<string, string>) {
  const db = await getDb();
  for (const [id, at] of byId) await db.execute(sql`UPDATE responses SET updated_at = (${at}::timestamp AT TIME ZONE 'UTC') WHERE id = ${id}`);
}

/** The database's clock as an API timestamp (the server's "now", which updated_at uses). */
async function dbNow(): Promise<string> {
  const [row] = await rows<{ t: string }>(await getDb(), sql`SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS t`);
  return row!.t;
}

describe('updated_since', () => {
  /** Two channels, conversations updated a minute apart, responses whose updated_at is set a minute apart. */
  async function syncAccount() {
    const acct = await createTestAccount();
    const [a, b] = await newChannelIds(2);
    const convs: ConversationLine[] = Array.from({ length: 8 }, (_, i) =>
      conversationLine({
        channel_id: i % 2 ? b! : a!,
        title: i % 3 === 0 ? `Billing ${i}` : `Chat ${i}`,
        created_at: ts(i * 10),
        updated_at: ts(600 + (i % 4) * 60), // ties on updated_at
      }),
    );
    const responses: ResponseLine[] = Array.from({ length: 12 }, (_, i) =>
      responseLine(convs[i % 8]!, {
        created_at: ts(1000 + i * 7),
        likes: i % 3,
        question: i % 4 === 0 ? `Refund ${i}?` : `Question ${i}?`,
      }),
    );
    await importLines(acct.accountId, [...convs, ...responses]);
    const responseUpdated = new Map(responses.map((r, i) => [r.response_id, ts(5000 + (i % 6) * 60)] as const));
    await setResponseUpdatedAt(responseUpdated);
    return { acct, a: a!, b: b!, convs, responses, responseUpdated, get: api(server.url, acct.key) };
  }

  it('includes the boundary second and excludes what changed before it, on both lists, with the exact count', async () => {
    const { convs, responses, responseUpdated, get } = await syncAccount();
    for (const since of [ts(600), ts(660), ts(661), ts(780), ts(781)]) {
      const want = convs.filter((c) => c.updated_at >= since);
      const body = (await get(`${V2}/conversation?updated_since=${enc(since)}&resultsPerPage=100`)).body;
      assert.equal(body.count, want.length, since);
      assert.deepEqual(new Set(ids(body.results)), new Set(want.map((c) => c.conversation_id)), since);
    }
    for (const since of [ts(5000), ts(5120), ts(5121), ts(5300), ts(5301)]) {
      const want = responses.filter((r) => responseUpdated.get(r.response_id)! >= since);
      const body = (await get(`${V2}/response?updated_since=${enc(since)}&resultsPerPage=100`)).body;
      assert.equal(body.count, want.length, since);
      assert.deepEqual(new Set(ids(body.results)), new Set(want.map((r) => r.response_id)), since);
    }
    // A response older than the updated_at column (NULL after migration 0011) changed at its created_at.
    const old = responses[0]!;
    await (await getDb()).execute(sql`UPDATE responses SET updated_at = NULL WHERE id = ${old.response_id}`);
    const windowIds = async (since: string) => ids((await get(`${V2}/response?updated_since=${enc(since)}&resultsPerPage=100`)).body.results);
    assert.ok((await windowIds(old.created_at)).includes(old.response_id), 'changed at its created_at: in the window from that second');
    assert.ok(!(await windowIds(ts(1001))).includes(old.response_id), 'and not in a later one');
    assert.equal(old.created_at, ts(1000));
    // '+' for the space (form encoding) is the same time.
    const plus = await get(`${V2}/conversation?updated_since=${ts(660).replace(' ', '+')}`);
    assert.equal(plus.body.count, convs.filter((c) => c.updated_at >= ts(660)).length);
  });

  it('combines with filters, search, every sort and paging; next/previous carry it; the export holds the same records in the same order', async () => {
    const { acct, a, convs, responses, responseUpdated, get } = await syncAccount();
    const since = ts(5060);
    const inWindow = responses.filter((r) => responseUpdated.get(r.response_id)! >= since);
    const cases: Array<{ q: string; want: ResponseLine[]; key: string; dir: 'ASC' | 'DESC' }> = [
      { q: `updated_since=${enc(since)}&order_by=likes&sort=ASC`, want: inWindow, key: 'likes', dir: 'ASC' },
      { q: `updated_since=${enc(since)}&channel_id=${a}`, want: inWindow.filter((r) => r.channel_id === a), key: 'created_at', dir: 'DESC' },
      {
        q: `updated_since=${enc(since)}&query=refund&sortBy=created_at&sortOrder=asc`,
        want: inWindow.filter((r) => /Refund/.test(r.question)),
        key: 'created_at',
        dir: 'ASC',
      },
      {
        q: `updated_since=${enc(since)}&conversation_id=${convs[1]!.conversation_id}`,
        want: inWindow.filter((r) => r.conversation_id === convs[1]!.conversation_id),
        key: 'created_at',
        dir: 'DESC',
      },
    ];
    for (const c of cases) {
      const expected = totalOrder(c.want.map(expectedResponse), c.key, 'id', c.dir);
      assert.ok(expected.length > 0, c.q);
      const walked = await walkPages(get, `${V2}/response?${c.q}&pageSize=2`);
      assert.deepEqual(walked.records, expected, c.q);
      assert.ok(
        walked.counts.every((n) => n === expected.length),
        c.q,
      );
      if (expected.length > 2) {
        const first = (await get(`${V2}/response?${c.q}&pageSize=2`)).body;
        assert.ok(linkParamSet(first.next).includes(`updated_since=${since}`), `next carries updated_since: ${first.next}`);
      }
      const out = await exported(`${V2}/response/export?${c.q}`, acct.key);
      assert.equal(out.status, 200, out.text);
      assert.deepEqual(ndjson(out.text), expected, `export ${c.q}`);
    }
    // Conversations: ties on updated_at broken by id; the export (NDJSON and CSV) matches the list.
    const cSince = ts(660);
    const want = totalOrder(
      convs.filter((c) => c.updated_at >= cSince).map((c) => expectedConversation(c, responses, acct.accountId)),
      'updated_at',
      'id',
      'ASC',
    );
    const walked = await walkPages(get, `${V2}/conversation?updated_since=${enc(cSince)}&order_by=updated_at&sort=ASC&resultsPerPage=2`);
    assert.deepEqual(walked.records, want);
    const out = await exported(`${V2}/conversation/export?updated_since=${enc(cSince)}&order_by=updated_at&sort=ASC`, acct.key);
    assert.deepEqual(ndjson(out.text), want);
    const csv = await exported(`${V2}/conversation/export?updated_since=${enc(cSince)}&order_by=updated_at&sort=ASC&format=csv`, acct.key);
    assert.equal(csv.status, 200);
    assert.equal(csv.text.trimEnd().split('\r\n').length, want.length + 1, 'a header and one row per record');
    const gridjs = (await get(`${V2}/conversation?updated_since=${enc(cSince)}&format=gridjs&resultsPerPage=1`)).body;
    assert.deepEqual(linkParamSet(gridjs.next), ['format=gridjs', 'page=2', 'resultsPerPage=1', `updated_since=${cSince}`]);
  });

  it('refuses anything but a real UTC YYYY-MM-DD HH:MM:SS with a 400 naming the parameter, on lists and exports', async () => {
    const { get } = await syncAccount();
    const BAD: Array<[string, RegExp]> = [
      ['2026-01-01T10:00:00', /YYYY-MM-DD HH:MM:SS/],
      ['2026-01-01T10:00:00Z', /not 'T'/],
      ['2026-01-01 10:00:00Z', /no zone/],
      ['2026-01-01 10:00:00+02:00', /no zone/],
      ['2026-01-01 10:00:00.5', /no fraction/],
      ['2026-01-01', /YYYY-MM-DD HH:MM:SS/],
      ['2026-1-1 10:00:00', /YYYY-MM-DD HH:MM:SS/],
      ['1767261600', /YYYY-MM-DD HH:MM:SS/],
      ['yesterday', /YYYY-MM-DD HH:MM:SS/],
      [' 2026-01-01 10:00:00', /YYYY-MM-DD HH:MM:SS/],
      ['2026-02-30 10:00:00', /real calendar time/],
      ['2026-01-01 24:00:00', /real calendar time/],
      ['2026-13-01 00:00:00', /real calendar time/],
      ['0000-01-01 00:00:00', /real calendar time/],
    ];
    for (const path of ['/response', '/conversation', '/response/export', '/conversation/export']) {
      for (const [value, message] of BAD) {
        const res = await get(`${V2}${path}?updated_since=${enc(value)}`);
        assertParamError(res, 'updated_since');
        assert.match(res.body.errors[0].message, message, `${path} ${value}`);
        assert.match(res.body.detail, /^updated_since: /);
      }
    }
    // An empty value counts as absent (docs/contracts.md §4); a repeated one uses its first value.
    assert.equal((await get(`${V2}/conversation?updated_since=`)).status, 200);
    const repeated = await get(`${V2}/conversation?updated_since=${enc(ts(780))}&updated_since=nonsense`);
    assert.equal(repeated.status, 200);
  });

  it('a like, a comment and a stored answer move records into the window; the conversation moves with the answer', { timeout: 60_000 }, async (t) => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const { access_token: token } = await backendToken(server.url, client);
    const visitor: Visitor = await connectVisitor(server.url, token, ORIGIN);
    t.after(() => visitor.close());
    const get = api(server.url, acct.key);
    const inWindow = async (since: string) => ids((await get(`${V2}/response?updated_since=${enc(since)}`)).body.results).sort();
    const started = await dbNow();
    const asked = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', { client_message_id: 'sync-1', text: 'Hello there?' });
    await visitor.finished(asked.response_id);
    assert.deepEqual(await inWindow(started), [asked.response_id], 'a stored answer is in the window that starts before it');
    // The next answer moves the conversation (its response_count and messages change) and is in the window.
    const beforeSecond = await dbNow();
    const second = await visitor.ok<{ response_id: string }>('ask', { conversation_id: asked.conversation_id, client_message_id: 'sync-2', text: 'Anyone?' });
    await visitor.finished(second.response_id);
    assert.ok((await inWindow(beforeSecond)).includes(second.response_id));
    const conv = (await get(`${V2}/conversation?updated_since=${enc(beforeSecond)}`)).body;
    assert.deepEqual(ids(conv.results), [asked.conversation_id]);
    assert.equal(conv.results[0].response_count, 2);

    // Age both responses; then a like (and a comment) brings back exactly the response it touched.
    await setResponseUpdatedAt(
      new Map([
        [asked.response_id, '2026-01-01 00:00:00'],
        [second.response_id, '2026-01-01 00:00:00'],
      ]),
    );
    const since = await dbNow();
    assert.deepEqual(await inWindow(since), []);
    await visitor.ok('feedback', { response_id: asked.response_id, value: 'like' });
    assert.deepEqual(await inWindow(since), [asked.response_id]);
    const liked = (await get(`${V2}/response?updated_since=${enc(since)}`)).body.results[0];
    assert.equal(liked.likes, 1);
    await visitor.ok('comment', { response_id: second.response_id, text: 'Thanks!' });
    assert.deepEqual(await inWindow(since), [asked.response_id, second.response_id].sort());
    const exportedIds = ndjson((await exported(`${V2}/response/export?updated_since=${enc(since)}`, acct.key)).text)
      .map((r) => r.id)
      .sort();
    assert.deepEqual(exportedIds, [asked.response_id, second.response_id].sort());
    // Feedback changes no field of the conversation record: it stays out of a window after its last answer.
    const after = (await get(`${V2}/conversation/${asked.conversation_id}`)).body.updated_at;
    assert.ok(after <= since, `${after} <= ${since}`);
  });

  it("an import moves the responses it inserts or changes (not what it leaves as is); conversations keep the file's updated_at", async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch!, updated_at: '2025-06-01 00:00:00' });
    const r1 = responseLine(conv, { created_at: '2025-06-01 00:00:00' });
    const r2 = responseLine(conv, { created_at: '2025-06-01 00:01:00' });
    await importLines(acct.accountId, [conv, r1, r2]);
    const get = api(server.url, acct.key);
    const since = await dbNow();
    // Inserted by an import: changed in this service now, whatever its created_at.
    await setResponseUpdatedAt(
      new Map([
        [r1.response_id, '2025-06-01 00:00:00'],
        [r2.response_id, '2025-06-01 00:01:00'],
      ]),
    );
    assert.equal((await get(`${V2}/response?updated_since=${enc(since)}`)).body.count, 0);
    // The same lines again change nothing; a changed like count moves that response.
    await importLines(acct.accountId, [r1, { ...r2, likes: 5 }]);
    const window = (await get(`${V2}/response?updated_since=${enc(since)}`)).body;
    assert.deepEqual(ids(window.results), [r2.response_id]);
    assert.equal(window.results[0].likes, 5);
    // A conversation's updated_at is the record's own field: an import writes the file's value, or leaves it.
    assert.equal((await get(`${V2}/conversation?updated_since=${enc(since)}`)).body.count, 0);
    await importLines(acct.accountId, [
      { ...conv, title: 'Renamed' },
      { ...r1, likes: 9 },
    ]);
    const rec = (await get(`${V2}/conversation/${conv.conversation_id}`)).body;
    assert.equal(rec.title, 'Renamed');
    assert.equal(rec.updated_at, '2025-06-01 00:00:00');
    assert.deepEqual(ids((await get(`${V2}/response?updated_since=${enc(since)}&order_by=id&sort=ASC`)).body.results), [r1.response_id, r2.response_id].sort());
  });
});

describe('GET /customer-api/v2/attachments/{attachment_id}', () => {
  const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

  /** An account whose visitor asked with two attachments (a multi-chunk PNG and a text file with an awkward name). */
  async function withAttachments(t: { after: (fn: () => void) => void }) {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['example.com']);
    const { access_token: token } = await backendToken(server.url, client);
    const png = pngOfSize(600 * 1024); // three 256 KiB chunk rows
    const text = Buffer.from('Order 4711 was shipped on Monday.\n');
    const name = 'Bestellung "Müller" (1)\'s *notes*; \\ ü.txt';
    const up1 = await upload(server.url, token, [{ name: 'scan.png', data: png }]);
    const up2 = await upload(server.url, token, [{ name, data: text }]);
    assert.equal(up1.status, 201, JSON.stringify(up1.body));
    assert.equal(up2.status, 201, JSON.stringify(up2.body));
    const visitor = await connectVisitor(server.url, token, ORIGIN);
    t.after(() => visitor.close());
    const ack = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', {
      client_message_id: 'att-1',
      text: 'Where is my order?',
      attachments: [up1.body.upload_id, up2.body.upload_id],
    });
    await visitor.finished(ack.response_id);
    return { acct, token, png, text, name, pngUpload: up1.body, textUpload: up2.body, conversationId: ack.conversation_id, get: api(server.url, acct.key) };
  }

  async function download(path: string, headers: Record<string, string>, init: RequestInit = {}) {
    const res = await fetch(`${server.url}${path}`, { ...init, headers, redirect: 'manual' });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  it('serves the uploaded bytes with the stored type, a safe attachment disposition and the security headers; messages carry the url', {
    timeout: 60_000,
  }, async (t) => {
    const f = await withAttachments(t);
    const detail = await f.get(`${V2}/conversation/${f.conversationId}`);
    const attachments = detail.body.messages[0].attachments as Rec[];
    const byId = new Map(attachments.map((a) => [a.upload_id, a]));
    assert.deepEqual(Object.keys(attachments[0]!).sort(), ['content_type', 'filename', 'size', 'upload_id', 'url']);
    for (const up of [f.pngUpload, f.textUpload]) assert.deepEqual(byId.get(up.upload_id), { ...up, url: `${V2}/attachments/${up.upload_id}` });
    // include=messages export carries the same attachment objects.
    const line = ndjson((await exported(`${V2}/conversation/export?include=messages`, f.acct.key)).text)[0]!;
    assert.deepEqual((line.messages as Rec[])[0]!.attachments, attachments);

    const auth = { authorization: `Bearer ${f.acct.key}` };
    for (const [up, bytes] of [
      [f.pngUpload, f.png],
      [f.textUpload, f.text],
    ] as const) {
      for (const direct of [true, false]) {
        setDirectApiEnabled(direct);
        try {
          const res = await download(byId.get(up.upload_id)!.url as string, auth);
          assert.equal(res.status, 200);
          assert.equal(sha(res.bytes), sha(bytes), 'the bytes as uploaded');
          assert.equal(res.headers.get('content-type'), up.content_type);
          // Next streams a route's body chunked and drops the length; the direct door sends it.
          if (direct) assert.equal(res.headers.get('content-length'), String(bytes.length));
          assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
          assert.equal(res.headers.get('cache-control'), 'private, no-store');
          assert.equal(res.headers.get('x-frame-options'), 'DENY');
          assert.equal(res.headers.get('content-security-policy'), "frame-ancestors 'none'");
          assert.equal(res.headers.get('referrer-policy'), 'strict-origin-when-cross-origin');
          assert.ok(res.headers.get('x-request-id'));
        } finally {
          setDirectApiEnabled(true);
        }
      }
    }
    const disposition = (await download(`${V2}/attachments/${f.textUpload.upload_id}`, auth)).headers.get('content-disposition')!;
    const m = /^attachment; filename="([\x20-\x7e]*)"; filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]+)$/.exec(disposition);
    assert.ok(m, disposition);
    assert.equal(decodeURIComponent(m[2]!), f.textUpload.filename, 'filename* is the exact stored name');
    assert.doesNotMatch(m[1]!, /["\\]/, 'the ASCII fallback holds no quote or backslash');
    // HEAD: the headers without a body; the id in upper case is the same attachment.
    const head = await download(`${V2}/attachments/${f.pngUpload.upload_id}`, auth, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.bytes.length, 0);
    const upper = await download(`${V2}/attachments/${f.pngUpload.upload_id.toUpperCase()}`, auth);
    assert.equal(sha(upper.bytes), sha(f.png));
    // The dashboard session reads it like the other operations; the transcript's old path gives the same file.
    const cookie = (await signIn(server.url, f.acct.email, f.acct.password)).cookie!;
    const viaSession = await download(`${V2}/attachments/${f.textUpload.upload_id}`, { cookie });
    assert.equal(viaSession.status, 200);
    assert.equal(sha(viaSession.bytes), sha(f.text));
    const legacy = await download(`/attachments/${f.textUpload.upload_id}`, { cookie });
    assert.equal(legacy.headers.get('content-disposition'), disposition);
  });

  it("another account's id is the same 404 as an unknown one; malformed ids are 404s; no key 401; POST 405", { timeout: 60_000 }, async (t) => {
    const f = await withAttachments(t);
    const other = await createTestAccount();
    const otherGet = api(server.url, other.key);
    const foreign = await otherGet(`${V2}/attachments/${f.textUpload.upload_id}`);
    assertProblem(foreign, 404);
    const unknownId = '0b6f5f0e-6a1e-4a0e-9d7e-0a1d2c3b4a59';
    const unknown = await otherGet(`${V2}/attachments/${unknownId}`);
    assertProblem(unknown, 404);
    assert.equal(foreign.body.detail.replace(f.textUpload.upload_id, 'X'), unknown.body.detail.replace(unknownId, 'X'), 'nothing tells them apart');
    for (const bad of ['not-a-uuid', '123', `${f.textUpload.upload_id}x`, `${f.textUpload.upload_id.slice(0, 35)}`, 'a'.repeat(300)]) {
      const res = await f.get(`${V2}/attachments/${bad}`);
      assertProblem(res, 404);
      assert.equal(res.body.detail, `No attachment with id ${bad.slice(0, 100)}.`, bad);
    }
    for (const bad of [`{${f.textUpload.upload_id}}`, '%00', '%ZZ', '..%2F..%2Fetc%2Fpasswd', `${f.textUpload.upload_id}/x`]) {
      assertProblem(await f.get(`${V2}/attachments/${bad}`), 404);
    }
    // A conversation id or response id is not an attachment id.
    assertProblem(await f.get(`${V2}/attachments/${f.conversationId}`), 404);
    // Credentials: none, malformed, revoked-like unknown; the method is checked first.
    assertUnauthorized(await api(server.url)(`${V2}/attachments/${f.textUpload.upload_id}`));
    assertUnauthorized(await api(server.url, 'svc_live_nope')(`${V2}/attachments/${f.textUpload.upload_id}`));
    const post = await api(server.url)(`${V2}/attachments/${f.textUpload.upload_id}`, { method: 'POST' });
    assertProblem(post, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    // A query parameter changes nothing (unknown parameters are ignored).
    assert.equal((await f.get(`${V2}/attachments/${f.textUpload.upload_id}?format=gridjs&x=1`)).status, 200);
  });
});
