/**
 * The account's own model (docs/contracts.md §16 "model per account"), against the local fake of
 * tests/fixtures/fake-model.ts (private addresses allowed, as a self-hosted deployment would): the
 * key is sealed at rest and never returned; "Test connection" says what worked or failed in our
 * words; answers reach the widget through the account's endpoint with its key and the bot's model;
 * passages get embeddings and retrieval fuses them with BM25; the built-in engine follows a conversation.
 */
import { CLI } from '../../lib/audit/contract';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { countChunkEmbeddings } from '../../db/queries/chunk-embeddings';
import { embedPendingPassages } from '../../lib/answers/embeddings';
import { rankForQuestion } from '../../lib/answers/engine';
import { answerEngine } from '../../lib/answers/engines';
import { CHAT_MAX_BYTES } from '../../lib/answers/endpoint-client';
import { MODEL_UNAVAILABLE } from '../../lib/answers/engines/openai';
import { KEY_FOR_ANOTHER_URL, saveModelEndpoint, testModelEndpoint } from '../../lib/answers/model-endpoint';
import { effectiveBotSettings, getBotSettings, getModelEndpointView, updateBotSettings } from '../../lib/bot/settings';
import type { ServerEvent } from '../../lib/chat/protocol';
import { isAppError } from '../../lib/core/errors';
import { openSecret } from '../../lib/core/secrets';
import { addKnowledgeDocument, findPassages, removeKnowledgeDocument } from '../../lib/knowledge/service';
import { PROVIDER_SECRET_TEXT, startFakeModel, type FakeModel } from '../fixtures/fake-model';
import { createTestAccount, importLines, newChannelIds } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { addKnowledge, backendToken, connectVisitor, createTestWidgetClient } from '../helpers/widget';

const KEY = 'sk-account-7f3a9c';
let server: TestServer;
let fake: FakeModel;
before(
  async () => {
    fake = await startFakeModel({ key: KEY });
    server = await startTestServer({
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: '1',
      TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
    await fake?.close();
  },
  { timeout: 30_000 },
);

/**
 * An endpoint that misbehaves by the first part of its path: /redirect answers 307 to /loot (a
 * hop that must never be taken), /forever streams chat chunks without end, /embed-* return bad
 * embeddings; everything else answers a chat completion and a valid embedding.
 */
let hostile: http.Server;
let hostileUrl = '';
const hostileSeen = { loot: 0, foreverBytes: 0, foreverClosed: 0 };
function startHostile() {
  hostile = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const input = (body ? JSON.parse(body) : {}).input;
      const n = Array.isArray(input) ? input.length : 1;
      const [, kind] = (req.url ?? '').split('/');
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      const embeddings = (vectors: unknown[]) => json({ object: 'list', data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })) });
      if (kind === 'loot') {
        hostileSeen.loot++;
        return json({ secret: 'metadata' });
      }
      if (kind === 'redirect') return res.writeHead(307, { location: `${hostileUrl}/loot/v1/chat/completions` }).end();
      if (kind === 'forever') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'la '.repeat(2000) } }] })}\n\n`;
        const pump = () => {
          while (!res.destroyed && res.write(chunk)) hostileSeen.foreverBytes += chunk.length;
          if (!res.destroyed) res.once('drain', pump);
        };
        res.on('close', () => hostileSeen.foreverClosed++);
        return pump();
      }
      if (req.url?.endsWith('/embeddings')) {
        if (kind === 'embed-wide') return embeddings(Array.from({ length: n }, () => new Array(5000).fill(0.1)));
        if (kind === 'embed-infinite') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,1e999,0.2]}]}');
        }
        if (kind === 'embed-count') return embeddings(Array.from({ length: n + 1 }, () => [0.1, 0.2]));
        if (kind === 'embed-huge') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1');
          return res.end(`${',0.1'.repeat(3 * 1024 * 1024)}]}]}`);
        }
        return embeddings([[0.1, 0.2]]);
      }
      json({
        id: 'c',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'OK' }, finish_reason: 'stop' }],
      });
    });
  });
  return new Promise<void>((r) =>
    hostile.listen(0, '127.0.0.1', () => {
      hostileUrl = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
      r();
    }),
  );
}
before(startHostile);
after(() => hostile?.close());

const endpoint = (over: Record<string, unknown> = {}) => ({ baseUrl: fake.url, apiKey: '', clearKey: false, embeddingModel: '', ...over });
const storedKey = async (accountId: number) =>
  (await rows<{ endpoint_api_key: string | null }>(await getDb(), sql`SELECT endpoint_api_key FROM bot_settings WHERE account_id = ${accountId}`))[0]
    ?.endpoint_api_key ?? null;

const RENTAL = `# Gear rental

## What you can rent

| Item | Per day | Per week |
|---|---|---|
| 2-person tent | €9 | €45 |
| Sleeping bag | €5 | €25 |

## Booking and deposit

Reserve rental gear online up to three months ahead and collect it at the Hamburg store. A deposit of €100 per item is held on your card.
`;

describe('the account endpoint: saved, sealed, never returned', () => {
  it('stores the key sealed; the view says only that one is set; replacing, keeping and clearing it', async () => {
    const acct = await createTestAccount();
    assert.deepEqual(await getModelEndpointView(acct.accountId), { baseUrl: '', keySet: false, embeddingModel: '' });
    const view = await saveModelEndpoint(CLI, acct.accountId, endpoint({ apiKey: KEY, embeddingModel: 'fake-embed' }));
    assert.deepEqual(view, { baseUrl: fake.url, keySet: true, embeddingModel: 'fake-embed' });
    assert.ok(!JSON.stringify(view).includes(KEY));
    const sealed = await storedKey(acct.accountId);
    assert.ok(sealed && !sealed.includes(KEY) && !sealed.includes(Buffer.from(KEY).toString('base64url')), 'not stored in clear');
    assert.equal(openSecret('model endpoint keys', sealed), KEY);
    assert.throws(() => openSecret('two-factor secrets', sealed), 'sealed for its purpose only');
    assert.ok(!JSON.stringify(await getBotSettings(acct.accountId)).includes(sealed), 'the settings the page reads hold no key');

    await saveModelEndpoint(CLI, acct.accountId, endpoint({ embeddingModel: 'fake-embed' }));
    assert.equal(await storedKey(acct.accountId), sealed, 'an empty key field keeps the stored key');
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ apiKey: 'sk-other' }));
    assert.equal(openSecret('model endpoint keys', (await storedKey(acct.accountId))!), 'sk-other', 'a typed key replaces it');
    assert.equal((await saveModelEndpoint(CLI, acct.accountId, endpoint({ clearKey: true }))).keySet, false);
    assert.equal(await storedKey(acct.accountId), null);
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ apiKey: KEY }));
    assert.deepEqual(await saveModelEndpoint(CLI, acct.accountId, endpoint({ baseUrl: '' })), { baseUrl: '', keySet: false, embeddingModel: '' });
    assert.equal(await storedKey(acct.accountId), null, 'disconnecting drops the key too');
    assert.equal((await effectiveBotSettings(acct.accountId)).endpoint, null);
  });

  it('a stored key is never sent to a changed base URL: saving or testing another URL needs the key again (or cleared)', async () => {
    const acct = await createTestAccount();
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ apiKey: KEY }));
    const moved = endpoint({ baseUrl: `${hostileUrl}/elsewhere/v1` });
    // Each attempt starts only when awaited: a second one rejecting meanwhile would be unhandled.
    for (const attempt of [() => saveModelEndpoint(CLI, acct.accountId, moved), () => testModelEndpoint(acct.accountId, moved)]) {
      await assert.rejects(attempt, (e: unknown) => {
        assert.ok(isAppError(e) && e.code === 'invalid_request', String(e));
        assert.equal(e.message, KEY_FOR_ANOTHER_URL);
        assert.deepEqual(
          e.errors?.map((x) => x.param),
          ['api_key'],
        );
        return true;
      });
    }
    assert.equal((await getModelEndpointView(acct.accountId)).baseUrl, fake.url, 'nothing changed');
    assert.equal(openSecret('model endpoint keys', (await storedKey(acct.accountId))!), KEY);
    assert.equal((await saveModelEndpoint(CLI, acct.accountId, { ...moved, clearKey: true })).keySet, false, 'cleared: saved without a key');
    await saveModelEndpoint(CLI, acct.accountId, { ...moved, apiKey: 'sk-new' });
    assert.equal(openSecret('model endpoint keys', (await storedKey(acct.accountId))!), 'sk-new', 'typed again: saved');
  });

  const BAD: Array<[string, Record<string, unknown>, string]> = [
    ['not a URL', { baseUrl: 'api.example.com/v1' }, 'base_url'],
    ['another scheme', { baseUrl: 'ftp://127.0.0.1/v1' }, 'base_url'],
    ['credentials in the URL', { baseUrl: 'http://user:pw@127.0.0.1/v1' }, 'base_url'],
    ['a base URL too long', { baseUrl: `http://127.0.0.1/${'a'.repeat(2000)}` }, 'base_url'],
    ['a key too long', { apiKey: 'k'.repeat(1001) }, 'api_key'],
    ['an embedding model with spaces', { embeddingModel: 'my model' }, 'embedding_model'],
    ['a base URL not a string', { baseUrl: 42 }, 'base_url'],
    ['clear_key not a boolean', { clearKey: 'yes' }, 'clear_key'],
  ];
  for (const [name, over, param] of BAD) {
    it(`refuses ${name} (invalid_request naming ${param}) and stores nothing`, async () => {
      const acct = await createTestAccount();
      await assert.rejects(saveModelEndpoint(CLI, acct.accountId, endpoint(over)), (e: unknown) => {
        assert.ok(isAppError(e) && e.code === 'invalid_request', String(e));
        assert.deepEqual(
          e.errors?.map((x) => x.param),
          [param],
          e.message,
        );
        return true;
      });
      assert.equal((await getModelEndpointView(acct.accountId)).baseUrl, '');
    });
  }
});

describe('Test connection', () => {
  const CASES: Array<[string, Record<string, unknown>, boolean, RegExp[]]> = [
    [
      'chat and embeddings work',
      { apiKey: KEY, embeddingModel: 'fake-embed' },
      true,
      [/^Chat: model test-chat answered\.$/, /^Embeddings: model fake-embed answered \(256 dimensions\)\.$/],
    ],
    ['a wrong key', { apiKey: 'sk-wrong' }, false, [/^Chat: model test-chat: the endpoint refused the key\.$/]],
    [
      'an unknown embedding model',
      { apiKey: KEY, embeddingModel: 'missing-embed' },
      false,
      [/^Chat: model test-chat answered/, /^Embeddings: .*answered "not found": check the base URL/],
    ],
    [
      'nothing listening',
      { baseUrl: 'http://127.0.0.1:9/v1', apiKey: KEY },
      false,
      [/^Chat: model test-chat: could not connect to the base URL, or no complete answer within 10 seconds\.$/],
    ],
  ];
  for (const [name, over, works, lines] of CASES) {
    it(`${name}: says so plainly, never with the provider's text`, async () => {
      const acct = await createTestAccount();
      await updateBotSettings(CLI, acct.accountId, { instructions: '', noAnswerText: '', model: 'test-chat', showSources: true });
      const r = await testModelEndpoint(acct.accountId, endpoint(over));
      assert.equal(r.works, works, JSON.stringify(r));
      assert.deepEqual(
        r.checks.map((c) => `${c.name}: ${c.detail}`).map((l, i) => lines[i]!.test(l) || l),
        lines.map(() => true),
      );
      assert.ok(!JSON.stringify(r).includes(PROVIDER_SECRET_TEXT));
      assert.equal((await getModelEndpointView(acct.accountId)).baseUrl, '', 'testing saves nothing');
    });
  }

  it('uses the stored key when the key field is empty; an empty base URL is a precise error', async () => {
    const acct = await createTestAccount();
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ apiKey: KEY }));
    assert.equal((await testModelEndpoint(acct.accountId, endpoint())).works, true);
    await assert.rejects(testModelEndpoint(acct.accountId, endpoint({ baseUrl: '' })), (e: unknown) => isAppError(e) && e.errors?.[0]?.param === 'base_url');
  });
});

describe('answers through the account endpoint', () => {
  it('the widget gets the answer of the account model (its key, the bot model); another account still gets the built-in engine', async (t) => {
    const own = await createTestAccount();
    const other = await createTestAccount();
    for (const a of [own, other]) await addKnowledge(a.accountId, 'rental.md', RENTAL);
    await updateBotSettings(CLI, own.accountId, { instructions: 'Be brief.', noAnswerText: '', model: 'account-chat-1', showSources: true });
    await saveModelEndpoint(CLI, own.accountId, endpoint({ apiKey: KEY }));
    const ask = async (accountId: number) => {
      const client = await createTestWidgetClient(accountId, ['example.com']);
      const visitor = await connectVisitor(server.url, (await backendToken(server.url, client)).access_token, 'https://example.com');
      t.after(() => visitor.close());
      const ack = await visitor.ok<{ response_id: string }>('ask', { client_message_id: randomUUID(), text: 'How much is a deposit for rental gear?' });
      return (await visitor.finished(ack.response_id)) as Extract<ServerEvent, { type: 'answer.done' }>;
    };
    const before = fake.requests.length;
    const done = await ask(own.accountId);
    assert.equal(done.type, 'answer.done', JSON.stringify(done));
    assert.equal(done.answer, 'Fake answer from Gear rental.');
    const chat = fake.requests.slice(before).find((r) => r.path.endsWith('/chat/completions'))!;
    assert.equal(chat.model, 'account-chat-1');
    assert.equal(chat.authorization, `Bearer ${KEY}`);
    const builtin = await ask(other.accountId);
    assert.match(builtin.answer, /^From \*\*Gear rental\*\*/, 'the built-in engine quotes');
  });

  it('a failing endpoint: the visitor sees the neutral message, never the provider text', async () => {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'rental.md', RENTAL);
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ apiKey: 'sk-revoked' }));
    await assert.rejects(
      (async () => {
        const a = await answerEngine().answer({
          accountId: acct.accountId,
          conversationId: randomUUID(),
          question: 'How much is the rental deposit?',
          signal: AbortSignal.timeout(10_000),
        });
        for await (const _ of a.deltas);
      })(),
      (e: Error) => e.message === 'The assistant is not available right now. Please try again in a moment.',
    );
  });
});

describe('a hostile endpoint: no redirect followed, bounded bodies, embeddings checked', () => {
  const test = async (path: string, embeddingModel = '') => {
    const acct = await createTestAccount();
    await updateBotSettings(CLI, acct.accountId, { instructions: '', noAnswerText: '', model: 'test-chat', showSources: true });
    const r = await testModelEndpoint(acct.accountId, { baseUrl: `${hostileUrl}/${path}/v1`, apiKey: 'sk-h', clearKey: false, embeddingModel });
    return r.checks.map((c) => `${c.name}: ${c.ok ? 'ok' : c.detail}`);
  };

  it('a 307 (which would keep the POST) is refused, never followed, and its status is not reported', async () => {
    assert.deepEqual(await test('redirect'), ['Chat: model test-chat: the endpoint answered with an error (redirects are not followed).']);
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'rental.md', RENTAL);
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ baseUrl: `${hostileUrl}/redirect/v1`, apiKey: 'sk-h' }));
    await assert.rejects(
      (async () => {
        const a = await answerEngine().answer({
          accountId: acct.accountId,
          conversationId: randomUUID(),
          question: 'How much is the rental deposit?',
          signal: AbortSignal.timeout(10_000),
        });
        for await (const _ of a.deltas);
      })(),
      (e: Error) => e.message === MODEL_UNAVAILABLE,
    );
    assert.equal(hostileSeen.loot, 0, 'the redirect target got no request');
  });

  it('an answer streamed without end is cut at the byte cap: the visitor gets the neutral message, memory stays bounded', async () => {
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'rental.md', RENTAL);
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ baseUrl: `${hostileUrl}/forever/v1`, apiKey: 'sk-h' }));
    const rss = process.memoryUsage().rss;
    const started = Date.now();
    let received = 0;
    await assert.rejects(
      (async () => {
        const a = await answerEngine().answer({
          accountId: acct.accountId,
          conversationId: randomUUID(),
          question: 'How much is the rental deposit?',
          signal: AbortSignal.timeout(60_000),
        });
        for await (const d of a.deltas) received += d.length;
      })(),
      (e: Error) => e.message === MODEL_UNAVAILABLE,
    );
    assert.ok(Date.now() - started < 20_000, 'cut by the byte cap, well before the answer deadline');
    assert.ok(received <= CHAT_MAX_BYTES, `${received} characters reached the answer`);
    for (let i = 0; i < 100 && hostileSeen.foreverClosed === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(hostileSeen.foreverClosed, 1, 'the connection was closed');
    assert.ok(process.memoryUsage().rss - rss < 256 * 1024 * 1024, 'memory stayed bounded');
  });

  it('embeddings too wide, not finite, of the wrong count or too large are refused, on Test connection and in the background', async () => {
    assert.deepEqual(await test('embed-wide', 'e'), [
      'Chat: ok',
      "Embeddings: model e: the endpoint's embeddings were refused: an embedding must have 1 to 4096 dimensions.",
    ]);
    assert.deepEqual(await test('embed-infinite', 'e'), [
      'Chat: ok',
      "Embeddings: model e: the endpoint's embeddings were refused: an embedding holds a value that is not a finite number.",
    ]);
    assert.deepEqual(await test('embed-count', 'e'), ['Chat: ok', "Embeddings: model e: the endpoint's embeddings were refused: expected 1 embeddings."]);
    assert.deepEqual(await test('embed-huge', 'e'), ['Chat: ok', "Embeddings: model e: the endpoint's answer could not be read."]);
    assert.deepEqual(await test('embed-fine', 'e'), ['Chat: ok', 'Embeddings: ok']);
    const acct = await createTestAccount();
    await addKnowledge(acct.accountId, 'rental.md', RENTAL);
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ baseUrl: `${hostileUrl}/embed-wide/v1`, apiKey: 'sk-h', embeddingModel: 'e' }));
    await assert.rejects(embedPendingPassages(acct.accountId), /an embedding must have 1 to 4096 dimensions/);
    assert.equal(await countChunkEmbeddings(await getDb(), acct.accountId, 'e'), 0);
  });
});

describe('retrieval with embeddings', () => {
  it('embeds every passage once, fuses the rankings, drops embeddings with their document, falls back to BM25 when embeddings fail', async () => {
    const acct = await createTestAccount();
    const doc = await addKnowledge(acct.accountId, 'rental.md', RENTAL);
    await addKnowledge(acct.accountId, 'care.md', '# Care\n\n## Tents\n\nNever pack a tent away wet: hang it to dry completely before storing it.\n');
    await saveModelEndpoint(CLI, acct.accountId, endpoint({ apiKey: KEY, embeddingModel: 'fake-embed' }));
    await embedPendingPassages(acct.accountId);
    assert.equal(await countChunkEmbeddings(await getDb(), acct.accountId, 'fake-embed'), 3);
    assert.equal(await embedPendingPassages(acct.accountId), 0, 'nothing embedded twice');

    const { endpoint: stored } = await effectiveBotSettings(acct.accountId);
    const input = { accountId: acct.accountId, conversationId: randomUUID(), question: 'Can I rent a tent?', signal: AbortSignal.timeout(10_000) };
    const embeddingsBefore = fake.requests.filter((r) => r.path.endsWith('/embeddings')).length;
    const fused = await rankForQuestion(input, [], 5, stored);
    assert.equal(fake.requests.filter((r) => r.path.endsWith('/embeddings')).length, embeddingsBefore + 1, 'the question is embedded');
    const lexical = await findPassages(acct.accountId, input.conversationId, input.question, 5);
    assert.deepEqual(
      new Set(fused.map((p) => `${p.title}/${p.ordinal}`)),
      new Set([...lexical.map((p) => `${p.title}/${p.ordinal}`), 'Gear rental/1']),
      'every passage BM25 found, and the one only the embeddings found',
    );
    const onlySemantic = fused.find((p) => p.title === 'Gear rental' && p.ordinal === 1)!;
    assert.equal(onlySemantic.relevance, 0, 'found by meaning alone: never relevant on its own');
    assert.equal(fused[0]!.title, 'Gear rental');

    const broken = { ...stored!, embeddingModel: 'missing-embed' };
    assert.deepEqual(
      (await rankForQuestion(input, [], 5, broken)).map((p) => p.ordinal),
      lexical.map((p) => p.ordinal),
      'the embedding request fails: BM25 alone',
    );
    await removeKnowledgeDocument(acct.accountId, doc.document_id);
    assert.equal(await countChunkEmbeddings(await getDb(), acct.accountId, 'fake-embed'), 1);
  });
});

describe('built-in engine: follow-ups', () => {
  it('answers "how many days in advance do I have to book it?" after a question about tents from the booking passage', async () => {
    const acct = await createTestAccount();
    await addKnowledgeDocument(acct.accountId, 'rental.html', fs.readFileSync('tests/eval/kb/rental.html'));
    const ask = async (conversationId: string, question: string) => {
      const a = await answerEngine().answer({ accountId: acct.accountId, conversationId, question, signal: AbortSignal.timeout(10_000) });
      let text = '';
      for await (const d of a.deltas) text += d;
      return { ...a, text };
    };
    const conversationId = randomUUID();
    const first = await ask(conversationId, 'Can I rent a tent from you?');
    assert.match(first.sources[0]!.passage, /^## What you can rent/);
    const at = '2026-01-01 10:00:00';
    const [channel] = await newChannelIds(1);
    await importLines(acct.accountId, [
      {
        type: 'conversation',
        conversation_id: conversationId,
        title: 't',
        status: 'Open',
        channel_id: channel!,
        channel_name: 'c',
        created_at: at,
        updated_at: at,
      },
      {
        type: 'response',
        response_id: randomUUID(),
        conversation_id: conversationId,
        question: 'Can I rent a tent from you?',
        answer: first.text,
        channel_id: channel!,
        created_at: at,
        likes: 0,
        dislikes: 0,
        comments: 0,
      },
    ]);
    const followUp = 'How many days in advance do I have to book it?';
    const then = await ask(conversationId, followUp);
    assert.equal(then.declined, false);
    assert.match(then.sources[0]!.passage, /^## Booking and deposit/, 'the booking rules, not the price list again');
    const alone = await ask(randomUUID(), followUp);
    assert.equal(alone.declined, true, 'without the conversation the question is too vague to answer');
  });
});
