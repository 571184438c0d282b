/**
 * POST /api/widget/uploads and GET /api/widget/config (docs/contracts.md §6): types decided by content,
 * the size limit, bearer tokens, and attachments that become answerable in their conversation only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ServerEvent } from '../../lib/chat/protocol';
import { getTranscript } from '../../lib/dashboard/service';
import { assertProblem, UUID_RE, V2 } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { addKnowledge, backendToken, connectVisitor, createTestWidgetClient, upload } from '../helpers/widget';
import {
  elfExecutable,
  htmlFragment,
  htmlPage,
  machoExecutable,
  mzExecutable,
  plainZip,
  pngOfSize,
  shellScript,
  svgImage,
  tinyDocx,
  tinyGif,
  tinyJpeg,
  tinyPdf,
  tinyPng,
  tinyWebp,
  wasmModule,
} from '../fixtures/widget-files';

const MAX = 20_000;
const ORIGIN = 'https://example.com';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({
      UPLOAD_MAX_BYTES: String(MAX),
      UPLOADS_PER_VISITOR_PER_MINUTE: '1000',
      TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

async function setup() {
  const acct = await createTestAccount();
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const issued = await backendToken(server.url, client);
  return { acct, client, token: issued.access_token, get: api(server.url, acct.key) };
}

describe('GET /api/widget/config', () => {
  it('serves the limits the widget must honour, the same the socket announces', async () => {
    const res = await api(server.url)('/api/widget/config', { headers: { origin: 'https://anywhere.test' } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const { limits } = res.body;
    assert.equal(limits.upload_max_bytes, MAX);
    assert.deepEqual(
      [...limits.upload_types].sort(),
      ['application/pdf', DOCX, 'image/gif', 'image/jpeg', 'image/png', 'image/webp', 'text/csv', 'text/markdown', 'text/plain'].sort(),
    );
    assert.ok(!limits.upload_types.some((t: string) => /svg|html|octet|executable/.test(t)));
    assert.equal(limits.question_max_chars, 4000);

    const { token } = await setup();
    const v = await connectVisitor(server.url, token, ORIGIN);
    v.close();
    assert.deepEqual(v.session!.limits, limits);
  });
});

describe('POST /api/widget/uploads', () => {
  it('accepts images and documents, typed by their bytes whatever the name or declared type', async () => {
    const { token } = await setup();
    const cases: Array<{ name: string; data: Buffer; type?: string; want: string }> = [
      { name: 'pixel.png', data: tinyPng(), type: 'image/png', want: 'image/png' },
      { name: 'photo.jpg', data: tinyJpeg(), want: 'image/jpeg' },
      { name: 'anim.gif', data: tinyGif(), want: 'image/gif' },
      { name: 'pic.webp', data: tinyWebp(), want: 'image/webp' },
      { name: 'pixel.jpg', data: tinyPng(), type: 'image/jpeg', want: 'image/png' },
      { name: 'no-extension', data: tinyPng(), want: 'image/png' },
      { name: 'manual.pdf', data: tinyPdf('Hello PDF'), type: 'application/pdf', want: 'application/pdf' },
      { name: 'letter.docx', data: tinyDocx('Hello DOCX'), type: DOCX, want: DOCX },
      { name: 'notes.txt', data: Buffer.from('Plain text, with ünïcödé.\n'), want: 'text/plain' },
      { name: 'README.md', data: Buffer.from('# Title\n\nSome *markdown*.\n'), want: 'text/markdown' },
      { name: 'table.csv', data: Buffer.from('a,b\n1,2\n'), type: 'text/csv', want: 'text/csv' },
    ];
    for (const c of cases) {
      const res = await upload(server.url, token, [{ name: c.name, data: c.data, type: c.type }]);
      assert.equal(res.status, 201, `${c.name}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(Object.keys(res.body).sort(), ['content_type', 'filename', 'size', 'upload_id']);
      assert.match(res.body.upload_id, UUID_RE);
      assert.equal(res.body.filename, c.name);
      assert.equal(res.body.content_type, c.want, c.name);
      assert.equal(res.body.size, c.data.length);
    }
  });

  it('keeps only a safe file name', async () => {
    const { token } = await setup();
    for (const name of ['../../etc/passwd.txt', '..\\..\\boot.ini.txt', 'C:\\temp\\x.txt']) {
      const res = await upload(server.url, token, [{ name, data: Buffer.from('hello\n') }]);
      assert.equal(res.status, 201, `${JSON.stringify(name)}: ${JSON.stringify(res.body)}`);
      assert.ok(!/[/\\\u0000-\u001f]/.test(res.body.filename), `stored name ${JSON.stringify(res.body.filename)}`);
    }
    // Control characters in a part header are malformed multipart (RFC 9110 forbids them): 400, nothing stored.
    for (const name of ['a\u0000b.txt', 'a\u0001b.txt']) {
      assertProblem(await upload(server.url, token, [{ name, data: Buffer.from('hello\n') }]), 400);
    }
  });

  it('refuses executables, SVG, HTML and other types with 415, whatever they are called', async () => {
    const { token } = await setup();
    const cases: Array<{ name: string; data: Buffer; type?: string }> = [
      { name: 'photo.png', data: mzExecutable(), type: 'image/png' },
      { name: 'photo.png', data: elfExecutable(), type: 'image/png' },
      { name: 'setup.exe', data: mzExecutable() },
      { name: 'report.pdf', data: machoExecutable(), type: 'application/pdf' },
      { name: 'module.txt', data: wasmModule() },
      { name: 'notes.txt', data: shellScript(), type: 'text/plain' },
      { name: 'logo.svg', data: svgImage(), type: 'image/svg+xml' },
      { name: 'logo.png', data: svgImage(), type: 'image/png' },
      { name: 'page.html', data: htmlPage(), type: 'text/html' },
      { name: 'notes.txt', data: htmlPage(), type: 'text/plain' },
      { name: 'README.md', data: htmlFragment() },
      { name: 'letter.docx', data: plainZip(), type: DOCX },
      { name: 'data.bin', data: Buffer.from([0x00, 0x01, 0x02, 0x03, 0xfe, 0xff, 0x10, 0x80]) },
    ];
    for (const c of cases) {
      const res = await upload(server.url, token, [{ name: c.name, data: c.data, type: c.type }]);
      assertProblem(res, 415);
      assert.equal(res.body.upload_id, undefined, c.name);
    }
  });

  it('takes a file of exactly the limit and refuses one byte more with 413', async () => {
    const { token } = await setup();
    const ok = await upload(server.url, token, [{ name: 'big.png', data: pngOfSize(MAX) }]);
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.size, MAX);
    for (const size of [MAX + 1, MAX * 5]) {
      const res = await upload(server.url, token, [{ name: 'big.png', data: pngOfSize(size) }]);
      assertProblem(res, 413);
      const text = await upload(server.url, token, [{ name: 'big.txt', data: Buffer.alloc(size, 'a') }]);
      assertProblem(text, 413);
    }
  });

  it('needs a valid widget token: 401 otherwise', async () => {
    const { acct } = await setup();
    const file = [{ name: 'pixel.png', data: tinyPng() }];
    const none = await upload(server.url, null, file);
    assertProblem(none, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    for (const bad of ['garbage', 'a.b.c', acct.key]) {
      assertProblem(await upload(server.url, bad, file), 401);
    }
    const basic = await api(server.url)('/api/widget/uploads', {
      method: 'POST',
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
      body: new FormData(),
    });
    assertProblem(basic, 401);
  });

  it('wants exactly one file in a multipart body', async () => {
    const { token } = await setup();
    assertProblem(await upload(server.url, token, []), 400);
    assertProblem(
      await upload(server.url, token, [
        { name: 'a.png', data: tinyPng() },
        { name: 'b.png', data: tinyPng() },
      ]),
      400,
    );
    const json = await api(server.url)('/api/widget/uploads', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"file":"x"}',
    });
    assertProblem(json, 400);
  });
});

describe('attachments in the chat', () => {
  const POLICY = 'The zorblax warranty covers accidental drops into volcanoes for up to five years.';

  async function uploaded(token: string, name: string, data: Buffer) {
    const res = await upload(server.url, token, [{ name, data }]);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { upload_id: string; filename: string; content_type: string; size: number };
  }

  it('an attached document can be asked about in its conversation, and the API lists it on the message', async (t) => {
    const { acct, client, token, get } = await setup();
    const visitor = await connectVisitor(server.url, token, ORIGIN);
    t.after(() => visitor.close());
    const doc = await uploaded(token, 'policy.md', Buffer.from(`# Zorblax policy\n\n${POLICY}\n`));
    const img = await uploaded(token, 'pixel.png', tinyPng());
    const ack = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', {
      client_message_id: 'att-1',
      text: 'What does the zorblax warranty cover?',
      attachments: [doc.upload_id, img.upload_id],
    });
    const end = await visitor.finished(ack.response_id);
    assert.equal(end.type, 'answer.done', JSON.stringify(end));
    const done = end as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.ok(done.answer.includes('accidental drops into volcanoes'), done.answer);
    // The visitor's own file is cited as theirs, never as the knowledge base's (lib/answers/engine.ts citationTitle).
    assert.equal(done.sources[0]?.title, 'your file policy.md');
    assert.ok(done.answer.startsWith('From **your file policy.md**:'), done.answer);
    assert.ok(!done.answer.includes('From **Zorblax policy**'), done.answer);
    const question = visitor.eventsOf(ack.response_id).find((e) => e.type === 'question') as Extract<ServerEvent, { type: 'question' }>;
    const byId = (a: { upload_id: string }, b: { upload_id: string }) => a.upload_id.localeCompare(b.upload_id);
    assert.deepEqual([...question.attachments].sort(byId), [doc, img].sort(byId));

    const conv = await get(`${V2}/conversation/${ack.conversation_id}`);
    assert.equal(conv.status, 200);
    const [user, assistant] = conv.body.messages;
    assert.equal(user.role, 'user');
    const withUrl = (a: { upload_id: string }) => ({ ...a, url: `${V2}/attachments/${a.upload_id}` });
    assert.deepEqual([...user.attachments].sort(byId), [doc, img].map(withUrl).sort(byId));
    assert.deepEqual(assistant.attachments, []);
    const transcript = await getTranscript(acct.accountId, ack.conversation_id);
    const answered = transcript?.messages.find((m) => m.author === 'ai');
    assert.deepEqual(
      answered?.sources.map((x) => x.title),
      ['your file policy.md'],
      "the transcript's sources cite it as the visitor's file",
    );
    const resp = await get(`${V2}/response/${ack.response_id}`);
    assert.equal(resp.status, 200);
    assert.ok(String(resp.body.answer).startsWith('From **your file policy.md**:'), resp.body.answer);

    // A follow-up in the same conversation still finds it.
    const next = await visitor.ok<{ response_id: string }>('ask', {
      conversation_id: ack.conversation_id,
      client_message_id: 'att-2',
      text: 'For how many years is the zorblax covered?',
    });
    const nextEnd = await visitor.finished(next.response_id);
    assert.ok((nextEnd as { answer: string }).answer.includes('five years'));
    assert.equal(client.channel_id, conv.body.channel_id);
  });

  for (const [kind, name, data, title] of [
    ['DOCX', 'terms.docx', tinyDocx(`Terms\n${POLICY}`), 'your file terms.docx'],
    ['PDF', 'terms.pdf', tinyPdf(POLICY), 'your file terms.pdf'],
  ] as const) {
    it(`an attached ${kind} is read and answered from`, async (t) => {
      const { token } = await setup();
      const visitor = await connectVisitor(server.url, token, ORIGIN, 'polling');
      t.after(() => visitor.close());
      const doc = await uploaded(token, name, data);
      const ack = await visitor.ok<{ response_id: string }>('ask', {
        client_message_id: 'k',
        text: 'What does the zorblax warranty cover?',
        attachments: [doc.upload_id],
      });
      const end = await visitor.finished(ack.response_id);
      assert.equal(end.type, 'answer.done');
      assert.ok((end as { answer: string }).answer.includes('volcanoes'), (end as { answer: string }).answer);
      assert.equal((end as { sources: Array<{ title: string }> }).sources[0]?.title, title, `cited as the visitor's ${name}`);
    });
  }

  it("a question of its own after one about the visitor's file is answered from the knowledge base, not declined", async (t) => {
    const { acct, token } = await setup();
    await addKnowledge(acct.accountId, 'faq.md', '# Help centre\n\n## Returns\n\nYou can return any item within 30 days for a full refund.\n');
    const visitor = await connectVisitor(server.url, token, ORIGIN);
    t.after(() => visitor.close());
    const receipt = await uploaded(token, 'receipt.txt', Buffer.from('Receipt 4411: one Trailblazer tent.\n'));
    const first = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', {
      client_message_id: 'r1',
      text: 'Can I return the tent on my receipt?',
      attachments: [receipt.upload_id],
    });
    const firstEnd = (await visitor.finished(first.response_id)) as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.equal(firstEnd.sources[0]?.title, 'your file receipt.txt', firstEnd.answer);
    const next = await visitor.ok<{ response_id: string }>('ask', {
      conversation_id: first.conversation_id,
      client_message_id: 'r2',
      text: 'How do returns work?',
    });
    const nextEnd = (await visitor.finished(next.response_id)) as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.equal(nextEnd.declined, false, nextEnd.answer);
    assert.ok(nextEnd.answer.startsWith('From **Help centre**:') && nextEnd.answer.includes('30 days'), nextEnd.answer);
  });

  it('another visitor can neither attach the upload nor get answers from it', async (t) => {
    const { acct, client, token, get } = await setup();
    await addKnowledge(acct.accountId, 'faq.md', '# Shipping\n\nWe ship from Rotterdam within two business days.\n');
    const owner = await connectVisitor(server.url, token, ORIGIN);
    t.after(() => owner.close());
    const doc = await uploaded(token, 'policy.md', Buffer.from(`# Zorblax policy\n\n${POLICY}\n`));

    const strangerToken = (await backendToken(server.url, client)).access_token;
    const stranger = await connectVisitor(server.url, strangerToken, ORIGIN);
    t.after(() => stranger.close());
    const refused = await stranger.request('ask', { client_message_id: 's1', text: 'What does the zorblax warranty cover?', attachments: [doc.upload_id] });
    assert.equal(refused.ok, false);
    assert.equal((refused as { error: { code: string } }).error.code, 'not_found');
    assert.equal((await get(`${V2}/response`)).body.count, 0, 'nothing stored for the refused ask');

    const used = await owner.ok<{ conversation_id: string; response_id: string }>('ask', {
      client_message_id: 'o1',
      text: 'What does the zorblax warranty cover?',
      attachments: [doc.upload_id],
    });
    await owner.finished(used.response_id);

    // Not in the stranger's conversations, not in the owner's other conversations.
    const probe = await stranger.ok<{ response_id: string }>('ask', { client_message_id: 's2', text: 'What does the zorblax warranty cover for volcanoes?' });
    const probeEnd = await stranger.finished(probe.response_id);
    assert.ok(!(probeEnd as { answer: string }).answer.includes('volcanoes'), (probeEnd as { answer: string }).answer);
    assert.ok(!JSON.stringify(probeEnd).includes('policy.md'));
    const ownNew = await owner.ok<{ response_id: string }>('ask', { client_message_id: 'o2', text: 'What does the zorblax warranty cover for volcanoes?' });
    const ownNewEnd = await owner.finished(ownNew.response_id);
    assert.ok(!(ownNewEnd as { answer: string }).answer.includes('volcanoes'));

    // An upload is attached once.
    const again = await owner.request('ask', { conversation_id: used.conversation_id, client_message_id: 'o3', text: 'Again?', attachments: [doc.upload_id] });
    assert.equal(again.ok, false);
    assert.equal((again as { error: { code: string } }).error.code, 'not_found');
    const unknown = await owner.request('ask', { client_message_id: 'o4', text: 'Hm?', attachments: ['00000000-0000-4000-8000-000000000000'] });
    assert.equal((unknown as { error: { code: string } }).error.code, 'not_found');
  });
});
