/**
 * The account's own model (docs/contracts.md §16 "model per account"), against the local fake of
 * tests/fixtures/fake-model.ts (private addresses allowed, as a self-hosted deployment would): the
 * key is sealed at rest and never returned; "Test connection" says what worked or failed in our
 * words; answers reach the widget through the account's endpoint with its key and the bot's model;
 * passages get embeddings and retrieval fuses them with BM25; the built-in engine follows a conversation.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { getDb, rows } from '../../db/client';
import { countChunkEmbeddings } from '../../db/queries/chunk-embeddings';
import { embedPendingPassages } from '../../lib/answers/embeddings';
import { rankForQuestion } from '../../lib/answers/engine';
import { answerEngine } from '../../lib/answers/engines';
import { saveModelEndpoint, testModelEndpoint } from '../../lib/answers/model-endpoint';
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
    const view = await saveModelEndpoint(acct.accountId, endpoint({ apiKey: KEY, embeddingModel: 'fake-embed' }));
    assert.deepEqual(view, { baseUrl: fake.url, keySet: true, embeddingModel: 'fake-embed' });
    assert.ok(!JSON.stringify(view).includes(KEY));
    const sealed = await storedKey(acct.accountId);
    assert.ok(sealed && !sealed.includes(KEY) && !sealed.includes(Buffer.from(KEY).toString('base64url')), 'not stored in clear');
    assert.equal(openSecret('model endpoint keys', sealed), KEY);
    assert.throws(() => openSecret('two-factor secrets', sealed), 'sealed for its purpose only');
    assert.ok(!JSON.stringify(await getBotSettings(acct.accountId)).includes(sealed), 'the settings the page reads hold no key');

    await saveModelEndpoint(acct.accountId, endpoint({ embeddingModel: 'fake-embed' }));
    assert.equal(await storedKey(acct.accountId), sealed, 'an empty key field keeps the stored key');
    await saveModelEndpoint(acct.accountId, endpoint({ apiKey: 'sk-other' }));
    assert.equal(openSecret('model endpoint keys', (await storedKey(acct.accountId))!), 'sk-other', 'a typed key replaces it');
    assert.equal((await saveModelEndpoint(acct.accountId, endpoint({ clearKey: true }))).keySet, false);
    assert.equal(await storedKey(acct.accountId), null);
    await saveModelEndpoint(acct.accountId, endpoint({ apiKey: KEY }));
    assert.deepEqual(await saveModelEndpoint(acct.accountId, endpoint({ baseUrl: '' })), { baseUrl: '', keySet: false, embeddingModel: '' });
    assert.equal(await storedKey(acct.accountId), null, 'disconnecting drops the key too');
    assert.equal((await effectiveBotSettings(acct.accountId)).endpoint, null);
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
      await assert.rejects(saveModelEndpoint(acct.accountId, endpoint(over)), (e: unknown) => {
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
    ['a wrong key', { apiKey: 'sk-wrong' }, false, [/^Chat: model test-chat: the endpoint refused the key \(HTTP 401\)\.$/]],
    [
      'an unknown embedding model',
      { apiKey: KEY, embeddingModel: 'missing-embed' },
      false,
      [/^Chat: model test-chat answered/, /^Embeddings: .*HTTP 404: check the base URL/],
    ],
    ['nothing listening', { baseUrl: 'http://127.0.0.1:9/v1', apiKey: KEY }, false, [/^Chat: model test-chat: could not connect to the base URL\.$/]],
  ];
  for (const [name, over, works, lines] of CASES) {
    it(`${name}: says so plainly, never with the provider's text`, async () => {
      const acct = await createTestAccount();
      await updateBotSettings(acct.accountId, { instructions: '', noAnswerText: '', model: 'test-chat', showSources: true });
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
    await saveModelEndpoint(acct.accountId, endpoint({ apiKey: KEY }));
    assert.equal((await testModelEndpoint(acct.accountId, endpoint())).works, true);
    await assert.rejects(testModelEndpoint(acct.accountId, endpoint({ baseUrl: '' })), (e: unknown) => isAppError(e) && e.errors?.[0]?.param === 'base_url');
  });
});

describe('answers through the account endpoint', () => {
  it('the widget gets the answer of the account model (its key, the bot model); another account still gets the built-in engine', async (t) => {
    const own = await createTestAccount();
    const other = await createTestAccount();
    for (const a of [own, other]) await addKnowledge(a.accountId, 'rental.md', RENTAL);
    await updateBotSettings(own.accountId, { instructions: 'Be brief.', noAnswerText: '', model: 'account-chat-1', showSources: true });
    await saveModelEndpoint(own.accountId, endpoint({ apiKey: KEY }));
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
    await saveModelEndpoint(acct.accountId, endpoint({ apiKey: 'sk-revoked' }));
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

describe('retrieval with embeddings', () => {
  it('embeds every passage once, fuses the rankings, drops embeddings with their document, falls back to BM25 when embeddings fail', async () => {
    const acct = await createTestAccount();
    const doc = await addKnowledge(acct.accountId, 'rental.md', RENTAL);
    await addKnowledge(acct.accountId, 'care.md', '# Care\n\n## Tents\n\nNever pack a tent away wet: hang it to dry completely before storing it.\n');
    await saveModelEndpoint(acct.accountId, endpoint({ apiKey: KEY, embeddingModel: 'fake-embed' }));
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
