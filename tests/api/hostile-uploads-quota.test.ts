/**
 * Storage strangers cannot fill and budgets they cannot reset (issue 9 items 3 and 4): the
 * per-account upload quota (also under concurrent uploads), the sweep of uploads never attached
 * (safe when several instances run it), the cap on documents indexed from attachments, and upload
 * limits per visitor, per client and per address, charged only after the token was verified.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getDb } from '../../db/client';
import { countAttachmentDocuments, insertUploadChunk, reserveUpload } from '../../db/queries/uploads';
import { attachments } from '../../db/schema';
import { resetLimiters } from '../../lib/limits/limiter';
import { legacyUploadsDir, migrateDiskUploads, sweepUploads } from '../../lib/uploads/maintenance';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { backendToken, connectVisitor, createTestWidgetClient, tokenRequest, type WidgetClient } from '../helpers/widget';
import { filler, hashBody, MiB, rawUpload, sha256Of, signIn, uploadStorage } from './hostile-uploads-helpers';

const QUOTA = 3 * MiB;
const DAY = 86400 * 1000;

let server: TestServer;
// On PostgreSQL the test server has no DATA_DIR of its own: give it one for the old disk uploads.
const pgDataDir = process.env.TEST_DB === 'postgres' ? fs.mkdtempSync(path.join(os.tmpdir(), 'svc-docs-data-')) : null;
before(
  async () => {
    server = await startTestServer({
      ...(pgDataDir ? { DATA_DIR: pgDataDir } : {}),
      UPLOAD_MAX_BYTES: String(MiB),
      UPLOAD_QUOTA_BYTES_PER_ACCOUNT: String(QUOTA),
      UPLOADS_PER_VISITOR_PER_MINUTE: '3',
      UPLOADS_PER_CLIENT_PER_MINUTE: '5',
      UPLOADS_PER_IP_PER_MINUTE: '8',
      ATTACHMENT_DOCUMENTS_PER_CONVERSATION: '2',
      TOKEN_RATE_PER_IP_PER_MINUTE: '100000',
      TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000',
    });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
    if (pgDataDir) fs.rmSync(pgDataDir, { recursive: true, force: true });
  },
  { timeout: 30_000 },
);
beforeEach(() => resetLimiters());

async function setup() {
  const acct = await createTestAccount();
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  return { acct, client, token: async () => (await backendToken(server.url, client)).access_token };
}

const oneMiB = (token: string, headers?: Record<string, string>) =>
  rawUpload(server.url, token, filler(MiB), { contentLength: 'exact', exactBytes: MiB, headers });
const small = (token: string, text = 'hello\n', headers?: Record<string, string>, filename = 'note.txt') =>
  rawUpload(server.url, token, [Buffer.from(text)], { contentLength: 'exact', exactBytes: Buffer.byteLength(text), headers, filename });

describe('per-account upload quota', () => {
  it('fills up to the quota, then refuses with 413 and stores nothing more', { timeout: 60_000 }, async () => {
    const { acct, token } = await setup();
    const [t1, t2] = [await token(), await token()];
    for (const t of [t1, t1, t2]) assert.equal((await oneMiB(t)).status, 201);
    assert.deepEqual(await uploadStorage(acct.accountId), { uploads: 3, chunks: 12, chunkBytes: QUOTA });
    const full = await small(t2);
    assert.equal(full.status, 413, JSON.stringify(full.body));
    assert.match(full.body.detail, new RegExp(`upload storage is full \\(${QUOTA} of ${QUOTA} bytes in use\\)`));
    assert.deepEqual(await uploadStorage(acct.accountId), { uploads: 3, chunks: 12, chunkBytes: QUOTA });
    // Another account is not affected.
    const other = await setup();
    assert.equal((await small(await other.token())).status, 201);
  });

  it('holds under concurrent uploads: exactly as many as fit succeed', { timeout: 60_000 }, async () => {
    const { acct, token } = await setup();
    const tokens = await Promise.all([1, 2, 3, 4, 5].map(() => token()));
    const results = await Promise.all(tokens.map((t) => oneMiB(t)));
    assert.deepEqual(results.map((r) => r.status).sort(), [201, 201, 201, 413, 413]);
    assert.deepEqual(await uploadStorage(acct.accountId), { uploads: 3, chunks: 12, chunkBytes: QUOTA });
  });
});

describe('upload limits per visitor, per client and per address', () => {
  it('a new visitor id does not start a new budget: the client and the address budgets hold', { timeout: 60_000 }, async () => {
    const a = await setup();
    const b = await setup();
    const v1 = await a.token();
    for (let i = 0; i < 3; i++) assert.equal((await small(v1)).status, 201);
    const perVisitor = await small(v1);
    assert.equal(perVisitor.status, 429);
    assert.match(perVisitor.body.detail, /uploads from this visitor/);
    assert.ok(Number(perVisitor.headers['retry-after']) >= 1);

    const v2 = await a.token();
    for (let i = 0; i < 2; i++) assert.equal((await small(v2)).status, 201);
    const perClient = await small(v2);
    assert.equal(perClient.status, 429);
    assert.match(perClient.body.detail, /uploads through this widget/);

    const v3 = await b.token();
    for (let i = 0; i < 2; i++) assert.equal((await small(v3)).status, 201);
    const perAddress = await small(v3);
    assert.equal(perAddress.status, 429);
    assert.match(perAddress.body.detail, /uploads from this address/);
  });

  it('fresh X-Svc-Visitor values on a client-id token meet the same client budget', { timeout: 60_000 }, async () => {
    const { client } = await setup();
    const issued = await tokenRequest(server.url, { client_id: (client as WidgetClient).client_id }, { origin: 'https://example.com' });
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const visitor = `v_${randomBytes(12).toString('hex')}`;
      statuses.push((await small(issued.body.access_token, 'x\n', { 'x-svc-visitor': visitor })).status);
    }
    assert.deepEqual(statuses, [201, 201, 201, 201, 201, 429, 429]);
  });

  it('requests without a valid token are refused before anything is charged', { timeout: 60_000 }, async () => {
    const { token } = await setup();
    for (let i = 0; i < 20; i++) {
      const res = await small(i % 2 ? 'garbage' : 'a.b.c');
      assert.equal(res.status, 401);
    }
    assert.equal((await small(await token())).status, 201, 'the address budget was not drained by refused requests');
  });
});

describe('documents indexed from visitor attachments are capped', () => {
  it(`at most 2 per conversation; the rest stay attached but unread`, { timeout: 60_000 }, async (t) => {
    const { acct, token } = await setup();
    const tk = await token();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await small(tk, `# Doc ${i}\n\nThe secret number ${i} is ${1000 + i}.\n`, undefined, `doc${i}.md`);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      ids.push(res.body.upload_id);
    }
    const visitor = await connectVisitor(server.url, tk, 'https://example.com');
    t.after(() => visitor.close());
    const ack = await visitor.ok<{ conversation_id: string; response_id: string }>('ask', {
      client_message_id: 'cap-1',
      text: 'What is the secret number?',
      attachments: ids,
    });
    await visitor.finished(ack.response_id);
    assert.equal(await countAttachmentDocuments(await getDb(), acct.accountId, ack.conversation_id), 2);
    assert.equal((await uploadStorage(acct.accountId)).uploads, 3, 'all three stay attached');
  });
});

describe('uploads kept on disk by an earlier version', () => {
  it('move into the database at start-up without loss, idempotently, even after an interrupted run', { timeout: 60_000 }, async () => {
    const { acct, client } = await setup();
    const db = await getDb();
    const dir = legacyUploadsDir();
    fs.mkdirSync(dir, { recursive: true });
    const files = [
      { id: '00000000-0000-4000-8000-0000000d0001', data: Buffer.concat([...filler(700 * 1024, 0x41)]) },
      { id: '00000000-0000-4000-8000-0000000d0002', data: Buffer.from('# Small\n\nold upload\n') },
    ];
    for (const f of files) {
      fs.writeFileSync(path.join(dir, `${f.id}.bin`), f.data);
      await db.insert(attachments).values({
        id: f.id,
        accountId: acct.accountId,
        clientId: client.client_id,
        visitorId: 'v_old',
        filename: `${f.id}.txt`,
        contentType: 'text/plain',
        size: f.data.length,
        storageName: `${f.id}.bin`,
      });
    }
    // An earlier run died after writing a stray chunk of the first file.
    await insertUploadChunk(db, files[0]!.id, 0, Buffer.from('partial'));
    const first = await migrateDiskUploads();
    assert.deepEqual(first, { moved: 2, missing: 0 });
    assert.equal(fs.existsSync(dir), false, 'the emptied directory is removed');
    assert.deepEqual(await migrateDiskUploads(), { moved: 0, missing: 0 }, 'a second run changes nothing');
    assert.deepEqual(await uploadStorage(acct.accountId), { uploads: 2, chunks: 3 + 1, chunkBytes: files[0]!.data.length + files[1]!.data.length });
    const cookie = await signIn(server.url, acct.email, acct.password);
    for (const f of files) {
      const res = await fetch(`${server.url}/attachments/${f.id}`, { headers: { cookie } });
      assert.equal(res.status, 200);
      const got = await hashBody(res);
      assert.deepEqual(got, { sha256: sha256Of([f.data]), bytes: f.data.length });
    }
  });
});

describe('sweep of uploads never attached', () => {
  it('deletes them after a day (and half-received ones after an hour), keeps attached ones; two sweeps at once are safe', { timeout: 60_000 }, async (t) => {
    const { acct, client, token } = await setup();
    const tk = await token();
    const kept = await small(tk, 'attached\n');
    const dropped = await small(tk, 'never attached\n');
    assert.equal(kept.status, 201);
    assert.equal(dropped.status, 201);
    const visitor = await connectVisitor(server.url, tk, 'https://example.com');
    t.after(() => visitor.close());
    const ack = await visitor.ok<{ response_id: string }>('ask', { client_message_id: 'sw-1', text: 'Hello?', attachments: [kept.body.upload_id] });
    await visitor.finished(ack.response_id);
    // A process that died mid-upload leaves a 'receiving' row behind.
    const db = await getDb();
    const reserved = await reserveUpload(
      db,
      acct.accountId,
      {
        id: '00000000-0000-4000-8000-00000000abcd',
        clientId: client.client_id,
        visitorId: 'v_dead',
        filename: 'x',
        reserveBytes: MiB,
      },
      QUOTA,
    );
    assert.equal(reserved.reserved, true);
    assert.equal((await uploadStorage(acct.accountId)).uploads, 3);

    await sweepUploads(new Date(Date.now() + 2 * 3600 * 1000));
    assert.equal((await uploadStorage(acct.accountId)).uploads, 2, 'the abandoned half-upload is gone after an hour');
    const before = await uploadStorage(acct.accountId);
    const started = Date.now();
    const [n1, n2] = await Promise.all([sweepUploads(new Date(Date.now() + DAY + 1000)), sweepUploads(new Date(Date.now() + DAY + 1000))]);
    const ms = Date.now() - started;
    assert.ok(n1 + n2 >= 1, `deleted ${n1} + ${n2}`);
    const afterSweep = await uploadStorage(acct.accountId);
    assert.equal(afterSweep.uploads, 1, 'only the attached upload remains');
    assert.ok(afterSweep.chunkBytes < before.chunkBytes, 'its chunks went with it');
    assert.ok(ms < 5000, `two concurrent sweeps took ${ms} ms`);
  });
});
