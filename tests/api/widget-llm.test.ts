/**
 * The OpenAI-compatible answer engine against a local chat-completions server that streams
 * server-sent events: deltas reach the visitor, the request carries the retrieved passages, a
 * failing or silent model never loses the question, and a visitor who drops out mid-answer
 * resumes with every event exactly once.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ServerEvent } from '../../lib/chat/protocol';
import { V2 } from '../helpers/api-fixtures';
import { api, createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import {
  addKnowledge, assertIncreasingSeq, backendToken, connectVisitor, createTestWidgetClient, type Visitor,
} from '../helpers/widget';

const TIMEOUT_MS = 2500;
const MODEL = 'test-model-7';
const LLM_KEY = 'sk-test-0123456789';
const ORIGIN = 'https://example.com';

type LlmRequest = { method: string; url: string; headers: IncomingHttpHeaders; body: any };
/** What the fake model does with the next request. */
type Behaviour = (res: ServerResponse, req: LlmRequest) => Promise<void> | void;

const sse = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
}
function startSse(res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

function streamChunks(chunks: string[], delayMs = 5): Behaviour {
  return async (res) => {
    startSse(res);
    for (const c of chunks) { res.write(sse(c)); await sleep(delayMs); }
    res.end('data: [DONE]\n\n');
  };
}

class FakeLlm {
  readonly requests: LlmRequest[] = [];
  behaviour: Behaviour = streamChunks(['Hello']);
  private server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      let body: unknown = null;
      try { body = JSON.parse(raw); } catch { /* recorded as null */ }
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      this.requests.push(r);
      void Promise.resolve(this.behaviour(res, r)).catch(() => res.destroy());
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const llm = new FakeLlm();
let server: TestServer;
before(async () => {
  const base = await llm.start();
  server = await startTestServer({
    LLM_BASE_URL: base, LLM_API_KEY: LLM_KEY, LLM_MODEL: MODEL, LLM_TIMEOUT_MS: String(TIMEOUT_MS),
    TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
  });
}, { timeout: 120_000 });
after(async () => {
  await server?.close();
  await llm.stop();
}, { timeout: 30_000 });
beforeEach(() => { llm.requests.length = 0; });

const WARRANTY = 'Every flux capacitor carries a two-year warranty covering parts and labour, counted from the day of delivery.';

async function setup() {
  const acct = await createTestAccount();
  await addKnowledge(acct.accountId, 'warranty.md', `# Warranty\n\n${WARRANTY}\n`);
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const issued = await backendToken(server.url, client);
  const visitor = await connectVisitor(server.url, issued.access_token, ORIGIN);
  return { acct, client, issued, visitor, get: api(server.url, acct.key) };
}

type AskAck = { conversation_id: string; response_id: string; duplicate: boolean };

describe('OpenAI-compatible engine', () => {
  it('streams the model\'s deltas to the visitor and sends it the passages, the model name and the key', async (t) => {
    const { client, visitor, get } = await setup();
    t.after(() => visitor.close());
    const chunks = ['The flux ', 'capacitor ', 'warranty ', 'lasts ', 'two years.'];
    llm.behaviour = async (res) => {
      startSse(res);
      res.write(': keep-alive\n\n');
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant' } }] })}\n\n`);
      for (const c of chunks) {
        const line = sse(c);
        res.write(line.slice(0, 9)); // a line split across network writes
        await sleep(5);
        res.write(line.slice(9));
      }
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    const question = 'How long is the flux capacitor warranty?';
    const ack = await visitor.ok<AskAck>('ask', { client_message_id: 'q1', text: question });
    const end = await visitor.finished(ack.response_id);
    assert.equal(end.type, 'answer.done', JSON.stringify(end));
    const events = visitor.eventsOf(ack.response_id);
    assertIncreasingSeq(events);
    const deltas = events.filter((e) => e.type === 'answer.delta').map((e) => (e as { text: string }).text);
    assert.deepEqual(deltas, chunks);
    const done = end as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.equal(done.answer, chunks.join(''));
    assert.equal(done.sources[0]?.title, 'Warranty');

    assert.equal(llm.requests.length, 1);
    const req = llm.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/chat/completions');
    assert.equal(req.headers.authorization, `Bearer ${LLM_KEY}`);
    assert.match(req.headers['content-type'] ?? '', /application\/json/);
    assert.equal(req.body.model, MODEL);
    assert.equal(req.body.stream, true);
    const system = req.body.messages.find((m: { role: string }) => m.role === 'system');
    assert.ok(system, 'a system message');
    assert.ok(system.content.includes(WARRANTY), `the system message carries the passage: ${system.content}`);
    assert.ok(system.content.includes('warranty.md'));
    assert.deepEqual(req.body.messages.at(-1), { role: 'user', content: question });

    const stored = await get(`${V2}/response/${ack.response_id}`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.question, question);
    assert.equal(stored.body.answer, chunks.join(''));
    assert.equal(stored.body.channel_id, client.channel_id);
  });

  const failures: Array<{ name: string; behaviour: Behaviour; message: RegExp }> = [
    { name: 'HTTP 500', behaviour: (res) => { res.writeHead(500, { 'content-type': 'application/json' }); res.end('{"error":{"message":"boom"}}'); }, message: /fail|500/i },
    { name: 'HTTP 429', behaviour: (res) => { res.writeHead(429); res.end(); }, message: /fail|429/i },
    { name: 'a model that never answers (timeout)', behaviour: () => { /* never responds */ }, message: /time|answer/i },
    { name: 'a stream that stops without [DONE] and hangs', behaviour: (res) => { startSse(res); res.write(sse('Partial ')); }, message: /time|finish/i },
    { name: 'a stream cut off mid-answer', behaviour: async (res) => { startSse(res); res.write(sse('Partial ')); await sleep(20); res.destroy(); }, message: /broke|fail|reach/i },
    { name: 'an error object in the stream', behaviour: (res) => { startSse(res); res.end(`data: ${JSON.stringify({ error: { message: 'overloaded' } })}\n\n`); }, message: /overloaded|fail/i },
    { name: 'a malformed stream', behaviour: (res) => { startSse(res); res.end('data: {not json\n\n'); }, message: /malformed|fail/i },
  ];
  for (const f of failures) {
    it(`tells the visitor and keeps the question when the model fails: ${f.name}`, async (t) => {
      const { visitor, get } = await setup();
      t.after(() => visitor.close());
      llm.behaviour = f.behaviour;
      const question = `What about the flux capacitor warranty (${f.name})?`;
      const started = Date.now();
      const ack = await visitor.ok<AskAck>('ask', { client_message_id: 'q', text: question });
      const end = await visitor.finished(ack.response_id, TIMEOUT_MS + 5000);
      assert.equal(end.type, 'answer.error', JSON.stringify(end));
      const message = (end as { message: string }).message;
      assert.match(message, f.message);
      assert.ok(!message.includes(LLM_KEY), 'the key never reaches the visitor');
      assert.ok(Date.now() - started < TIMEOUT_MS + 4000, 'the timeout is honoured');
      assert.equal(visitor.eventsOf(ack.response_id).filter((e) => e.type === 'answer.done').length, 0);

      const stored = await get(`${V2}/response/${ack.response_id}`);
      assert.equal(stored.status, 200, 'the question is stored as a response');
      assert.equal(stored.body.question, question);
      assert.equal(stored.body.answer, '');
      const conv = await get(`${V2}/conversation/${ack.conversation_id}`);
      assert.equal(conv.body.response_count, 1);
      assert.deepEqual(conv.body.messages.map((m: { role: string; content: string }) => [m.role, m.content]), [['user', question], ['assistant', '']]);
      const hist = await visitor.ok<{ messages: Array<{ role: string; error: string | null }> }>('history', { conversation_id: ack.conversation_id });
      assert.equal(hist.messages[1]!.error, message);
    });
  }

  it('a retry while the answer is still streaming, and after it finished, stores one response', async (t) => {
    const { issued, visitor, get } = await setup();
    t.after(() => visitor.close());
    const gate = deferred();
    t.after(() => gate.resolve());
    llm.behaviour = async (res) => {
      startSse(res);
      res.write(sse('Two '));
      await gate.promise;
      res.end(`${sse('years.')}data: [DONE]\n\n`);
    };
    const payload = { client_message_id: 'same', text: 'How long is the flux capacitor warranty?' };
    const first = await visitor.ok<AskAck>('ask', payload);
    await visitor.until(() => visitor.eventsOf(first.response_id).some((e) => e.type === 'answer.delta'), 'the first delta');
    const again = { ...payload, conversation_id: first.conversation_id };
    const streaming = await visitor.ok<AskAck>('ask', again);
    const other = await connectVisitor(server.url, issued.access_token, ORIGIN, 'polling');
    t.after(() => other.close());
    const streamingElsewhere = await other.ok<AskAck>('ask', again);
    assert.equal(visitor.eventsOf(first.response_id).some((e) => e.type === 'answer.done'), false, 'still streaming');
    gate.resolve();
    await visitor.finished(first.response_id);
    const afterDone = await other.ok<AskAck>('ask', again);
    for (const ack of [streaming, streamingElsewhere, afterDone]) {
      assert.equal(ack.response_id, first.response_id);
      assert.equal(ack.duplicate, true);
    }
    await sleep(100);
    assert.equal(llm.requests.length, 1, 'the model was asked once');
    assert.equal((await get(`${V2}/response`)).body.count, 1);
    assert.equal((await get(`${V2}/response/${first.response_id}`)).body.answer, 'Two years.');
    assert.equal(visitor.events.filter((e) => e.type === 'question').length, 1);
  });

  it('a visitor who drops out mid-answer resumes with every remaining event exactly once', async (t) => {
    const { issued, visitor: asker, get } = await setup();
    t.after(() => asker.close());
    const chunks = Array.from({ length: 12 }, (_, i) => `part${i + 1} `);
    const gates = [deferred(), deferred()];
    t.after(() => { for (const g of gates) g.resolve(); });
    llm.behaviour = async (res) => {
      startSse(res);
      for (let i = 0; i < chunks.length; i++) {
        if (i === 4) await gates[0]!.promise;
        if (i === 8) await gates[1]!.promise;
        res.write(sse(chunks[i]!));
        await sleep(2);
      }
      res.end('data: [DONE]\n\n');
    };

    const ack = await asker.ok<AskAck>('ask', { client_message_id: 'long', text: 'Tell me everything about the flux capacitor warranty.' });
    const observer = await connectVisitor(server.url, issued.access_token, ORIGIN, 'polling');
    t.after(() => observer.close());
    await observer.ok('conversation:resume', { conversation_id: ack.conversation_id, last_seq: 0 });
    const deltasOf = (v: Visitor) => v.events.filter((e) => e.type === 'answer.delta').length;
    await asker.until(() => deltasOf(asker) === 4, 'the first four deltas');
    await observer.until(() => deltasOf(observer) === 4, 'the observer\'s first four deltas');

    const before = [...asker.events];
    const lastSeq = before.at(-1)!.seq;
    asker.close();
    gates[0]!.resolve(); // four more deltas while the asker is away
    await observer.until(() => deltasOf(observer) === 8, 'the observer\'s next four deltas');

    const back = await connectVisitor(server.url, issued.access_token, ORIGIN, 'websocket');
    t.after(() => back.close());
    const resumed = await back.ok<{ last_seq: number }>('conversation:resume', { conversation_id: ack.conversation_id, last_seq: lastSeq });
    assert.ok(resumed.last_seq > lastSeq);
    await back.until(() => deltasOf(back) === 4, 'the replayed deltas');
    gates[1]!.resolve(); // the rest arrives live
    await back.finished(ack.response_id);
    await observer.finished(ack.response_id);
    await sleep(100);

    const combined = [...before, ...back.events];
    const seqs = combined.map((e) => e.seq);
    assert.equal(new Set(seqs).size, seqs.length, `no seq twice: ${seqs}`);
    assertIncreasingSeq(combined);
    assert.deepEqual(seqs, observer.events.map((e) => e.seq), 'none missing compared with a client that stayed');
    assert.deepEqual(combined, observer.events);
    const done = combined.at(-1) as Extract<ServerEvent, { type: 'answer.done' }>;
    assert.equal(done.type, 'answer.done');
    assert.equal(done.answer, chunks.join(''));
    assert.equal(combined.filter((e) => e.type === 'answer.delta').map((e) => (e as { text: string }).text).join(''), done.answer);
    assert.equal((await get(`${V2}/response/${ack.response_id}`)).body.answer, done.answer);
    assert.equal((await get(`${V2}/response`)).body.count, 1);
  });
});
