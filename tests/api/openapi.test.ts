// One database: PostgreSQL — the document and its agreement with the answers do not depend on the database
/**
 * The public OpenAPI document: valid OpenAPI 3.1 by a real validator, complete (operationIds, tags,
 * examples, alias parameters), loadable by browser tools (CORS), rendered at /docs/api from our
 * own origin, and true: each operation's documented example, run against a real server, answers
 * a body that matches the documented schema.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020';
import { CONVERSATION_DETAIL_EXAMPLE } from '../../lib/conversations/contract';
import { RESPONSE_EXAMPLE } from '../../lib/responses/contract';
import { eq } from 'drizzle-orm';
import { ATTACHMENT_EXAMPLE_ID, CUSTOMER_OPERATIONS } from '../../lib/customer-api/operations';
import { getDb } from '../../db/client';
import { attachments } from '../../db/schema';
import { insertUploadChunk } from '../../db/queries/uploads';
import { api, conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { V2 } from '../helpers/api-fixtures';
import { startTestServer, type TestServer } from '../helpers/server';

/** A visitor's file under the documented example id (a widget upload would get a random one). */
async function storeExampleAttachment(accountId: number) {
  const db = await getDb();
  await db.delete(attachments).where(eq(attachments.id, ATTACHMENT_EXAMPLE_ID)); // from an earlier run on this database
  const example = CUSTOMER_OPERATIONS.find((o) => o.operationId === 'getAttachment')!.example.response as string;
  await db.insert(attachments).values({
    id: ATTACHMENT_EXAMPLE_ID,
    accountId,
    filename: 'order-note.txt',
    contentType: 'text/plain',
    size: Buffer.byteLength(example),
  });
  await insertUploadChunk(db, ATTACHMENT_EXAMPLE_ID, 0, Buffer.from(example));
}

let server: TestServer;
let doc: any;
before(async () => {
  server = await startTestServer();
  doc = (await api(server.url)(`${V2}/openapi.json`)).body;
});
after(async () => {
  await server?.close();
});

const DOC_ID = 'https://svc.invalid/openapi.json';

/** A JSON Schema 2020-12 validator that resolves the document's own `#/components/schemas/…`. */
function validatorFor(document: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat('uuid', /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/);
  ajv.addSchema({ $id: DOC_ID, components: document.components });
  return (schema: unknown, value: unknown, label: string) => {
    const validate = ajv.compile({
      $id: `${DOC_ID}/check/${Math.random()}`,
      ...JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)),
    });
    assert.ok(validate(value), `${label}: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${JSON.stringify(value).slice(0, 300)}`);
  };
}

function walk(node: unknown, visit: (key: string, value: unknown) => void): void {
  if (Array.isArray(node)) {
    for (const v of node) walk(v, visit);
    return;
  }
  if (!node || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node)) {
    visit(k, v);
    walk(v, visit);
  }
}

/** The 200 body's media type: JSON, one NDJSON line for the export downloads, or a stored file's bytes. */
const ok200 = (op: any) =>
  op.responses['200'].content['application/json'] ??
  op.responses['200'].content['application/x-ndjson'] ??
  op.responses['200'].content['application/octet-stream'];

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([p, item]) =>
    Object.entries(item).map(([method, op]) => ({ path: p, method, op })),
  );

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 (swagger-parser validate), with no $id and no dangling $ref', async () => {
    assert.equal(doc.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(doc));
    walk(doc, (key, value) => {
      assert.notEqual(key, '$id');
      assert.notEqual(key, '$defs');
      if (key === '$ref') assert.match(String(value), /^#\/components\/schemas\/[A-Za-z]+$/);
    });
  });

  it('names, tags and illustrates every operation of the table, and declares the alias parameters', () => {
    const ops = operations();
    assert.deepEqual(ops.map((o) => o.op.operationId).sort(), CUSTOMER_OPERATIONS.map((o) => o.operationId).sort());
    const tagNames = (doc.tags as Array<{ name: string }>).map((t) => t.name);
    for (const { path, method, op } of ops) {
      const label = `${method} ${path}`;
      assert.ok(op.summary && op.description, label);
      assert.ok(op.tags.length === 1 && tagNames.includes(op.tags[0]), label);
      assert.ok(ok200(op).example, `${label} has a response example`);
      for (const s of ['401', '405', '503']) assert.ok(op.responses[s], `${label} documents ${s}`);
      // 400 is documented exactly where a query parameter can be invalid.
      assert.equal(
        Boolean(op.responses['400']),
        op.parameters.some((p: any) => p.in === 'query'),
        `${label}: 400 iff query parameters`,
      );
      for (const p of op.parameters.filter((x: any) => x.in === 'path')) assert.ok(p.example, `${label}: example for ${p.name}`);
      const names = op.parameters.map((p: any) => p.name);
      if (op.operationId.startsWith('list')) {
        for (const n of ['page', 'resultsPerPage', 'pageSize', 'order_by', 'sortBy', 'sort', 'sortOrder', 'channel_id', 'channel_ids[]', 'query', 'format']) {
          assert.ok(names.includes(n), `${label} declares ${n}`);
        }
        const alias = op.parameters.find((p: any) => p.name === 'pageSize');
        assert.deepEqual(alias.schema, op.parameters.find((p: any) => p.name === 'resultsPerPage').schema);
        assert.match(alias.description, /resultsPerPage/);
        assert.ok(
          op.parameters.some((p: any) => p.example !== undefined),
          `${label} has example parameters`,
        );
      } else if (op.operationId.startsWith('export')) {
        for (const n of ['order_by', 'sortBy', 'sort', 'sortOrder', 'channel_id', 'channel_ids[]', 'query', 'format'])
          assert.ok(names.includes(n), `${label} declares ${n}`);
        for (const n of ['page', 'resultsPerPage', 'pageSize']) assert.ok(!names.includes(n), `${label} has no ${n}`);
        assert.ok(op.responses['200'].content['text/csv'], `${label} documents CSV`);
      } else if (op.operationId === 'getInsights') {
        assert.deepEqual(
          op.parameters.map((p: any) => [p.name, Boolean(p.required)]),
          [
            ['from', true],
            ['to', true],
            ['channel_id', false],
          ],
        );
        assert.ok(!op.responses['404'], `${label} names no record: no 404`);
      } else {
        assert.ok(op.responses['404'], `${label} documents 404`);
      }
      if (op.operationId === 'getAttachment') {
        assert.ok(op.responses['200'].headers['Content-Disposition'], `${label} documents Content-Disposition`);
        assert.equal(op.responses['200'].content['application/octet-stream'].schema.format, 'binary');
      }
    }
    assert.ok(ops.find((o) => o.path === '/response')!.op.parameters.some((p: any) => p.name === 'conversation_id'));
  });

  it('defines the honest resolution figures of the insights (CONTRACTS §20)', () => {
    const props = (doc.components.schemas.Insights as { properties: Record<string, { type?: string; description?: string }> }).properties;
    for (const [name, says] of [
      ['ai_involved', /at least one answer/],
      ['ai_resolved_confirmed', /liked an answer, rated the conversation 4–5, or thanked/],
      ['ai_resolved_assumed', /ai_resolved_confirmed \+ ai_resolved_assumed = ai_resolved/],
    ] as const) {
      assert.equal(props[name]?.type, 'integer', name);
      assert.match(props[name]!.description ?? '', says, name);
    }
  });

  it('has examples that match their own schemas', () => {
    const check = validatorFor(doc);
    for (const { path, method, op } of operations()) {
      const content = ok200(op);
      check(content.schema, content.example, `${method} ${path} example`);
      for (const p of op.parameters) if (p.example !== undefined) check(p.schema, p.example, `${op.operationId} ${p.name}`);
    }
  });

  it("answers each operation's example on a real server with a body matching the documented schema", async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({
      channel_id: ch!,
      conversation_id: RESPONSE_EXAMPLE.conversation_id,
      title: 'Password reset',
      created_at: '2026-01-05 10:00:00',
      updated_at: '2026-01-05 10:01:12',
    });
    const r = responseLine(conv, {
      response_id: RESPONSE_EXAMPLE.response_id,
      question: RESPONSE_EXAMPLE.question,
      answer: RESPONSE_EXAMPLE.answer,
      created_at: RESPONSE_EXAMPLE.created_at,
      likes: 1,
    });
    await importLines(acct.accountId, [conv, r]);
    await storeExampleAttachment(acct.accountId);
    const get = api(server.url, acct.key);
    const check = validatorFor(doc);
    for (const { path, method, op } of operations()) {
      let url = `${V2}${path}`;
      const query = new URLSearchParams();
      for (const p of op.parameters) {
        if (p.example === undefined) continue;
        if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
        else query.append(p.name, String(p.example));
      }
      const full = query.size ? `${url}?${query}` : url;
      if (op.operationId.startsWith('export')) {
        // A download: every NDJSON line matches the documented line schema.
        const res = await fetch(`${server.url}${full}`, { headers: { authorization: `Bearer ${acct.key}` } });
        assert.equal(res.status, 200, full);
        const lines = (await res.text())
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l));
        assert.ok(lines.length > 0, `${full} finds the example record`);
        for (const line of lines) check(ok200(op).schema, line, full);
        continue;
      }
      if (op.operationId === 'getAttachment') {
        // The stored file: its bytes are the documented example, with its stored type.
        const res = await fetch(`${server.url}${full}`, { headers: { authorization: `Bearer ${acct.key}` } });
        assert.equal(res.status, 200, full);
        assert.equal(res.headers.get('content-type'), 'text/plain');
        const text = await res.text();
        assert.equal(text, ok200(op).example);
        check(ok200(op).schema, text, full);
        continue;
      }
      const res = await get(full, { method: method.toUpperCase() });
      assert.equal(res.status, 200, `${full}: ${JSON.stringify(res.body)}`);
      check(op.responses['200'].content['application/json'].schema, res.body, full);
      if ('results' in res.body) assert.ok(res.body.results.length > 0, `${full} finds the example record`);
      if (op.operationId === 'getConversation') {
        assert.deepEqual(
          res.body.messages.map((m: any) => [m.role, m.content]),
          CONVERSATION_DETAIL_EXAMPLE.messages.map((m) => [m.role, m.content]),
        );
      }
      // The gridjs form matches the documented schema too.
      const cells = await get(`${url}?${new URLSearchParams([...query, ['format', 'gridjs']])}`);
      assert.equal(cells.status, 200);
      check(op.responses['200'].content['application/json'].schema, cells.body, `${full} gridjs`);
    }
    // Errors match the documented problem schema.
    for (const [p, status] of [
      [`${V2}/response?page=0`, 400],
      [`${V2}/response/${crypto.randomUUID()}`, 404],
    ] as const) {
      const res = await get(p);
      assert.equal(res.status, status);
      check({ $ref: '#/components/schemas/Problem' }, res.body, p);
    }
    check({ $ref: '#/components/schemas/Problem' }, (await api(server.url)(`${V2}/response`)).body, '401');
  });

  it('can be loaded by browser tools on other origins (CORS, preflight)', async () => {
    const origin = 'https://editor.example';
    const res = await fetch(`${server.url}${V2}/openapi.json`, { headers: { origin } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const pre = await fetch(`${server.url}${V2}/openapi.json`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'accept' },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /\bGET\b/);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /accept/i);
    assert.equal(await pre.text(), '');
  });
});

describe('the reference page /docs/api', () => {
  it('is served with every asset from our own origin', async () => {
    const res = await fetch(`${server.url}/docs/api`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.doesNotMatch(html, /(src|href)="(https?:)?\/\//, 'no off-origin asset');
    assert.doesNotMatch(html, /<script>(?!<)/, 'no inline script');
    const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(assets.includes('/docs/api/assets/swagger-ui-bundle.js'));
    assert.ok(assets.includes(`${V2}/openapi.json`));
    for (const a of assets) {
      const r = await fetch(`${server.url}${a}`);
      assert.equal(r.status, 200, a);
      const type = r.headers.get('content-type') ?? '';
      if (a.endsWith('.js')) assert.match(type, /javascript/, a);
      if (a.endsWith('.css')) assert.match(type, /text\/css/, a);
      assert.ok((await r.arrayBuffer()).byteLength > 0, a);
    }
    const missing = await api(server.url)('/docs/api/assets/package.json');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /problem\+json/);
  });
});
