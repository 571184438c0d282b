/**
 * Visitors' comments (socket `comment`, `comment_list` on GET /response/{id}, the transcript),
 * the widget's history with attachments, and a client's appearance: saved, validated (it is
 * rendered on customers' pages) and served by GET /api/widget/config (docs/contracts.md §16).
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { AppError } from '../../lib/core/errors';
import { MAX_VISITOR_MESSAGES } from '../../lib/conversations/handoff-contract';
import { insertConversationMessage } from '../../db/queries/handoff';
import { COMMENTS_PER_RESPONSE } from '../../lib/responses/contract';
import { getTranscript } from '../../lib/dashboard/service';
import { setClientAppearance } from '../../lib/widget-clients/service';
import { assertProblem, TS_RE, V2 } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { addKnowledge, backendToken, connectVisitor, createTestWidgetClient, upload, type Visitor } from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

const ORIGIN = 'https://example.com';

async function setup() {
  const acct = await createTestAccount();
  await addKnowledge(acct.accountId, 'faq.md', '# Delivery\n\nWe deliver every weekday between 9 and 12, and on Saturdays until noon.\n');
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const issued = await backendToken(server.url, client);
  const visitor = await connectVisitor(server.url, issued.access_token, ORIGIN);
  return { acct, client, token: issued.access_token, visitor, get: api(server.url, acct.key) };
}

async function answered(visitor: Visitor, cmid: string, text = 'When do you deliver?', attachments?: string[]) {
  const ack = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', {
    client_message_id: cmid,
    text,
    ...(attachments ? { attachments } : {}),
  });
  await visitor.finished(ack.response_id);
  return ack;
}

describe('comments', () => {
  it('a comment sent over the socket is listed by GET /response/{id} (oldest first) and in the transcript', async (t) => {
    const { acct, visitor, get } = await setup();
    t.after(() => visitor.close());
    const ack = await answered(visitor, 'c-1');
    await visitor.ok('feedback', { response_id: ack.response_id, value: 'dislike' });
    const first = await visitor.ok<{ comments: number; comment_id: string }>('comment', { response_id: ack.response_id, text: '  Not on Sundays?  ' });
    assert.equal(first.comments, 1);
    const second = await visitor.ok<{ comments: number }>('comment', { response_id: ack.response_id, text: 'Please add <b>Sunday</b> hours.' });
    assert.equal(second.comments, 2);

    const one = await get(`${V2}/response/${ack.response_id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.comments, 2);
    assert.deepEqual(
      one.body.comment_list.map((c: { text: string }) => c.text),
      ['Not on Sundays?', 'Please add <b>Sunday</b> hours.'],
    );
    for (const c of one.body.comment_list) {
      assert.deepEqual(Object.keys(c).sort(), ['created_at', 'text']);
      assert.match(c.created_at, TS_RE);
    }
    // The list records stay as they are (the count only); the gridjs form stays one table row.
    const list = await get(`${V2}/response?conversation_id=${ack.conversation_id}`);
    assert.equal(list.body.results[0].comments, 2);
    assert.equal('comment_list' in list.body.results[0], false);
    const cells = await get(`${V2}/response/${ack.response_id}?format=gridjs`);
    assert.equal(cells.status, 200);
    assert.equal('comment_list' in cells.body, false);
    assert.equal(cells.body.comments, 2);

    const transcript = await getTranscript(acct.accountId, ack.conversation_id);
    const answer = transcript!.messages.find((m) => m.author === 'ai')!;
    assert.deepEqual(
      answer.commentTexts.map((c) => c.body),
      ['Not on Sundays?', 'Please add <b>Sunday</b> hours.'],
    );

    // Another account's key sees nothing of it.
    const other = await createTestAccount();
    assertProblem(await api(server.url, other.key)(`${V2}/response/${ack.response_id}`), 404);
  });

  it('an answer with 1,000 comments: the next is refused with limit_reached, and comment_list and the transcript show the first 20 (issue 33 item 7)', async (t) => {
    const { acct, visitor, get } = await setup();
    t.after(() => visitor.close());
    const ack = await answered(visitor, 'c-many');
    const db = await getDb();
    await db.execute(sql`
      INSERT INTO response_comments (account_id, response_id, visitor_id, body, created_at)
      SELECT ${acct.accountId}, ${ack.response_id}, 'planted', 'comment ' || g, now() - interval '1 hour' + make_interval(secs => g)
      FROM generate_series(1, 1000) g`);
    await db.execute(sql`UPDATE responses SET comments = 1000 WHERE id = ${ack.response_id}`);

    const refused = await visitor.request('comment', { response_id: ack.response_id, text: 'One more?' });
    assert.equal(refused.ok, false);
    if (!refused.ok) {
      assert.equal(refused.error.code, 'limit_reached');
      assert.match(refused.error.message, new RegExp(`at most ${COMMENTS_PER_RESPONSE} comments`));
    }
    const one = await get(`${V2}/response/${ack.response_id}`);
    assert.equal(one.body.comments, 1000, 'the count stays what it is');
    assert.equal(one.body.comment_list.length, COMMENTS_PER_RESPONSE);
    assert.equal(one.body.comment_list[0].text, 'comment 1', 'oldest first');
    const transcript = await getTranscript(acct.accountId, ack.conversation_id);
    assert.equal(transcript!.messages.find((m) => m.author === 'ai')!.commentTexts.length, COMMENTS_PER_RESPONSE);

    // A fresh answer takes 20 comments over the socket, then refuses the 21st.
    const fresh = await answered(visitor, 'c-twenty', 'Do you deliver on Saturdays?');
    for (let i = 1; i <= COMMENTS_PER_RESPONSE; i++) {
      const r = await visitor.ok<{ comments: number }>('comment', { response_id: fresh.response_id, text: `note ${i}` });
      assert.equal(r.comments, i);
    }
    const over = await visitor.request('comment', { response_id: fresh.response_id, text: 'note 21' });
    assert.equal(over.ok ? 'ok' : over.error.code, 'limit_reached');
    assert.equal((await get(`${V2}/response/${fresh.response_id}`)).body.comments, COMMENTS_PER_RESPONSE);
  });

  it(`a conversation holding ${MAX_VISITOR_MESSAGES} questions refuses the next ask with limit_reached (a retry of a stored one is still acknowledged)`, async (t) => {
    const { visitor } = await setup();
    t.after(() => visitor.close());
    const ack = await answered(visitor, 'q-first');
    await (await getDb()).execute(sql`UPDATE conversations SET response_count = ${MAX_VISITOR_MESSAGES} WHERE id = ${ack.conversation_id}`);
    const r = await visitor.request('ask', { conversation_id: ack.conversation_id, client_message_id: 'q-over', text: 'And on Sundays?' });
    assert.equal(r.ok ? 'ok' : r.error.code, 'limit_reached');
    const again = await visitor.ok<{ response_id: string; duplicate: boolean }>('ask', {
      conversation_id: ack.conversation_id,
      client_message_id: 'q-first',
      text: 'When do you deliver?',
    });
    assert.deepEqual([again.response_id, again.duplicate], [ack.response_id, true]);
  });

  it('the cap counts the messages a visitor left for the team too: questions plus stored messages at the cap refuse the next ask', async (t) => {
    const { visitor, acct } = await setup();
    t.after(() => visitor.close());
    const ack = await answered(visitor, 'q-mixed');
    const db = await getDb();
    await insertConversationMessage(db, acct.accountId, ack.conversation_id, {
      author: 'visitor',
      authorUserId: null,
      authorName: null,
      text: 'A message the team kept',
      clientMessageId: 'kept-1',
    });
    await db.execute(sql`UPDATE conversations SET response_count = ${MAX_VISITOR_MESSAGES - 1} WHERE id = ${ack.conversation_id}`);
    const r = await visitor.request('ask', { conversation_id: ack.conversation_id, client_message_id: 'q-mixed-over', text: 'And on Sundays?' });
    assert.equal(r.ok ? 'ok' : r.error.code, 'limit_reached');
  });

  it('a response without comments has an empty comment_list', async (t) => {
    const { visitor, get } = await setup();
    t.after(() => visitor.close());
    const ack = await answered(visitor, 'c-empty');
    const one = await get(`${V2}/response/${ack.response_id}`);
    assert.deepEqual([one.body.comments, one.body.comment_list], [0, []]);
  });

  it('refuses bad comments with a precise code and stores nothing', async (t) => {
    const { client, visitor, get } = await setup();
    const stranger = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, ORIGIN);
    t.after(() => {
      visitor.close();
      stranger.close();
    });
    const ack = await answered(visitor, 'c-bad');
    const cases: Array<{ name: string; who?: Visitor; payload: unknown; code: string; message?: RegExp }> = [
      { name: 'empty text', payload: { response_id: ack.response_id, text: '   ' }, code: 'invalid_request', message: /text/ },
      { name: 'too long', payload: { response_id: ack.response_id, text: 'x'.repeat(2001) }, code: 'invalid_request', message: /text/ },
      { name: 'NUL', payload: { response_id: ack.response_id, text: 'a\u0000b' }, code: 'invalid_request', message: /NUL/ },
      { name: 'no text', payload: { response_id: ack.response_id }, code: 'invalid_request', message: /text/ },
      { name: 'text not a string', payload: { response_id: ack.response_id, text: 42 }, code: 'invalid_request', message: /text/ },
      { name: 'malformed id', payload: { response_id: 'nope', text: 'hi' }, code: 'invalid_request', message: /response_id/ },
      { name: 'unknown id', payload: { response_id: '00000000-0000-4000-8000-000000000000', text: 'hi' }, code: 'not_found' },
      { name: "another visitor's answer", who: stranger, payload: { response_id: ack.response_id, text: 'hi' }, code: 'not_found' },
    ];
    for (const c of cases) {
      const r = await (c.who ?? visitor).request('comment', c.payload);
      assert.equal(r.ok, false, c.name);
      if (r.ok) continue;
      assert.equal(r.error.code, c.code, `${c.name}: ${JSON.stringify(r.error)}`);
      if (c.message) assert.match(r.error.message, c.message, c.name);
    }
    const one = await get(`${V2}/response/${ack.response_id}`);
    assert.deepEqual([one.body.comments, one.body.comment_list], [0, []]);
  });
});

describe('widget history after a reload', () => {
  it("lists a question's attachments", async (t) => {
    const { token, visitor } = await setup();
    t.after(() => visitor.close());
    const res = await upload(server.url, token, [{ name: 'order.txt', data: Buffer.from('Order 1234: two cakes\n') }]);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const ack = await answered(visitor, 'h-1', 'Where is my order?', [res.body.upload_id]);
    const hist = await visitor.ok<{ messages: Array<{ role: string; attachments: unknown[] }> }>('history', { conversation_id: ack.conversation_id });
    assert.deepEqual(
      hist.messages.map((m) => [m.role, m.attachments]),
      [
        ['user', [{ filename: 'order.txt', content_type: 'text/plain', size: 22 }]],
        ['assistant', []],
      ],
    );
  });
});

const invalid = (pattern: RegExp) => (e: unknown) => e instanceof AppError && e.code === 'invalid_request' && pattern.test(e.message);

describe('appearance', () => {
  const config = (query: string) => api(server.url)(`/api/widget/config${query}`, { headers: { origin: 'https://anywhere.test' } });

  it('is saved normalised, served with the client id, and absent without one', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId);
    const saved = await setClientAppearance(CLI, acct.accountId, client.client_id, {
      bot_name: ' Bluebird ',
      header_name: '',
      header_icon_url: 'https://cdn.example.com/bird.png',
      welcome_title: 'Hello!',
      welcome_text: 'Ask about cakes.\nWe answer at once.',
      default_questions: 'Do you deliver?\n\n  Which cakes are vegan?  \n',
      primary_color: '#1d4ed8',
      background_color: 'rgb(255, 250, 240)',
      font: 'Georgia, "Times New Roman", serif',
      corner_radius: '8px',
      handoff_button_text: '  Chat with our team ',
    });
    const expected = {
      bot_name: 'Bluebird',
      header_icon_url: 'https://cdn.example.com/bird.png',
      welcome_title: 'Hello!',
      welcome_text: 'Ask about cakes.\nWe answer at once.',
      default_questions: ['Do you deliver?', 'Which cakes are vegan?'],
      primary_color: '#1d4ed8',
      background_color: 'rgb(255, 250, 240)',
      font: 'Georgia, "Times New Roman", serif',
      corner_radius: 8,
      handoff_button_text: 'Chat with our team',
    };
    assert.deepEqual(saved, expected);
    const served = await config(`?client_id=${client.client_id}`);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('access-control-allow-origin'), '*');
    assert.deepEqual(served.body.appearance, expected);
    assert.equal(served.body.protocol, 1);

    const plain = await config('');
    assert.equal(plain.status, 200);
    assert.equal('appearance' in plain.body, false);

    // Saving again replaces: blank fields are unset.
    assert.deepEqual(await setClientAppearance(CLI, acct.accountId, client.client_id, { bot_name: 'Robin' }), { bot_name: 'Robin' });
    assert.deepEqual((await config(`?client_id=${client.client_id}`)).body.appearance, { bot_name: 'Robin' });

    const fresh = await createTestWidgetClient(acct.accountId);
    assert.deepEqual((await config(`?client_id=${fresh.client_id}`)).body.appearance, {});
  });

  it('config refuses a malformed or unknown client id with problem+json', async () => {
    for (const [query, status] of [
      ['?client_id=', 400],
      ['?client_id=nope', 400],
      ['?client_id=wc_%3Cscript%3E', 400],
      ['?client_id=wc_000000000000000000', 404],
    ] as const) {
      const r = await config(query);
      assertProblem(r, status);
    }
  });

  it("another account's client is not found", async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId);
    await assert.rejects(
      setClientAppearance(CLI, other.accountId, client.client_id, { bot_name: 'Stolen' }),
      (e) => e instanceof AppError && e.code === 'not_found',
    );
  });

  it('refuses what is not plain text, a colour, a safe font, an https address or a bounded radius', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId);
    await setClientAppearance(CLI, acct.accountId, client.client_id, { bot_name: 'Kept' });
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['colour with a rule after it', { primary_color: 'red;} body{display:none' }, /Primary colour: must be a CSS colour/],
      ['colour as a url()', { background_color: 'url(https://evil.test/x.png)' }, /Background colour: must be a CSS colour/],
      ['colour with a var()', { primary_color: 'var(--x)' }, /Primary colour: must be a CSS colour/],
      ['colour expression', { primary_color: 'rgb(1,2,3) !important' }, /Primary colour/],
      ['hex of 5 digits', { primary_color: '#12345' }, /Primary colour/],
      ['font closing the rule', { font: 'Arial; } :host { display: none' }, /Font: must be font family names/],
      ['font with a quote escape', { font: 'Arial", url(x)' }, /Font/],
      ['font with braces', { font: 'a{b}' }, /Font/],
      ['font too long', { font: `A${', Georgia'.repeat(20)}` }, /Font: at most 120 characters/],
      ['javascript URL', { header_icon_url: 'javascript:alert(1)' }, /Header icon URL: must be an https:\/\/ address/],
      ['http URL', { header_icon_url: 'http://cdn.example.com/a.png' }, /Header icon URL/],
      ['data URL', { header_icon_url: 'data:image/svg+xml,<svg onload=alert(1)>' }, /Header icon URL/],
      ['URL with credentials', { header_icon_url: 'https://user:pw@cdn.example.com/a.png' }, /Header icon URL/],
      ['not a URL', { header_icon_url: 'https://' }, /Header icon URL/],
      ['radius too large', { corner_radius: '33' }, /Corner radius: must be a whole number of pixels from 0 to 32/],
      ['radius negative', { corner_radius: '-1' }, /Corner radius/],
      ['radius in em', { corner_radius: '2em' }, /Corner radius/],
      ['radius fraction', { corner_radius: 1.5 }, /Corner radius/],
      ['bot name on two lines', { bot_name: 'A\nB' }, /Bot name: must be one line of plain text/],
      ['bot name with a control character', { bot_name: 'A\u0007' }, /Bot name/],
      ['bot name too long', { bot_name: 'x'.repeat(41) }, /Bot name: at most 40 characters/],
      ['header name too long', { header_name: 'x'.repeat(61) }, /Header name: at most 60 characters/],
      ['welcome text too long', { welcome_text: 'x'.repeat(401) }, /Welcome text: at most 400 characters/],
      ['seven questions', { default_questions: 'a\nb\nc\nd\ne\nf\ng' }, /Default questions: at most 6 questions/],
      ['a question too long', { default_questions: 'x'.repeat(121) }, /Default questions: each question at most 120 characters/],
      [
        'handoff text with a tag',
        { handoff_button_text: '<img src=x onerror=alert(1)>' },
        /Handoff button text: must be one line of plain text, without < or >/,
      ],
      ['handoff text closing a tag', { handoff_button_text: 'Talk</button><script>' }, /Handoff button text/],
      ['handoff text with a lone >', { handoff_button_text: 'Talk > now' }, /Handoff button text/],
      ['handoff text on two lines', { handoff_button_text: 'Talk\nto us' }, /Handoff button text: must be one line/],
      ['handoff text with a control character', { handoff_button_text: 'Talk\u0000' }, /Handoff button text/],
      ['handoff text too long', { handoff_button_text: 'x'.repeat(41) }, /Handoff button text: at most 40 characters/],
      ['handoff text as a number', { handoff_button_text: 7 }, /Handoff button text/],
      ['a field the contract does not have', { custom_css: 'body{}' }, /custom_css/],
      ['a number as a name', { bot_name: 5 }, /Bot name/],
    ];
    for (const [name, input, message] of cases) {
      await assert.rejects(setClientAppearance(CLI, acct.accountId, client.client_id, input), invalid(message), name);
    }
    assert.deepEqual((await config(`?client_id=${client.client_id}`)).body.appearance, { bot_name: 'Kept' }, 'nothing refused was stored');
  });
});
