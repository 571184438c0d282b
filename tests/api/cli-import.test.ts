/**
 * `import --account ID --file PATH` through the real CLI process (docs/contracts.md §2, §3): its output,
 * its rejections, a large file with progress, and a process killed in the middle of an import.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { rows, type Db } from '../../db/client';
import {
  conversationLine,
  createTestAccount,
  importLines,
  newChannelIds,
  responseLine,
  type ConversationLine,
  type ResponseLine,
  type TestAccount,
} from '../helpers/builders';
import { inDb, parseSuccess, readPosition, runCli, snapshotAccount, spawnCli, tempFile, useCliDatabase } from '../helpers/cli';

const cliDb = useCliDatabase();
after(() => cliDb.cleanup());

/** A small import takes a few seconds; one that outlives this is hanging. */
const SMALL = 20_000;

const ndjson = (lines: Array<object | string>) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;

async function recordCounts(db: Db, accountId: number) {
  const [r] = await rows<{ conversations: number; responses: number }>(
    db,
    sql`
    SELECT (SELECT count(*)::int FROM conversations WHERE account_id = ${accountId}) AS conversations,
           (SELECT count(*)::int FROM responses WHERE account_id = ${accountId}) AS responses`,
  );
  return r!;
}

/** A file of `conversations` conversations with `perConversation` responses each, padded to be large. */
function writeBigFile(channelId: number, conversations: number, perConversation: number): { file: string; lines: number } {
  const file = tempFile('big.ndjson', '');
  const fd = fs.openSync(file, 'w');
  const pad = 'lorem ipsum dolor sit amet '.repeat(5);
  let chunk: string[] = [];
  let lines = 0;
  for (let i = 0; i < conversations; i++) {
    const conv = conversationLine({ channel_id: channelId, title: `Bulk conversation ${i}` });
    chunk.push(JSON.stringify(conv));
    for (let j = 0; j < perConversation; j++) {
      chunk.push(JSON.stringify(responseLine(conv, { question: `Question ${i}.${j}?`, answer: `Answer ${j}: ${pad}`, likes: j % 3 })));
    }
    lines += 1 + perConversation;
    if (chunk.length > 5000) {
      fs.writeSync(fd, `${chunk.join('\n')}\n`);
      chunk = [];
    }
  }
  fs.writeSync(fd, `${chunk.join('\n')}\n`);
  fs.closeSync(fd);
  return { file, lines };
}

describe('CLI import', () => {
  let a: TestAccount;
  let b: TestAccount;
  let chA: number;
  let bConv: ConversationLine;
  let bResp: ResponseLine;

  before(async () => {
    await inDb(async () => {
      a = await createTestAccount('CLI import A');
      b = await createTestAccount('CLI import B');
      const [x, y] = await newChannelIds(2);
      chA = x!;
      bConv = conversationLine({ channel_id: y! });
      bResp = responseLine(bConv);
      await importLines(b.accountId, [bConv, bResp]);
    });
  });

  it('prints exactly {conversations, responses}; running the same file again changes nothing', async () => {
    const c1 = conversationLine({ channel_id: chA });
    const c2 = conversationLine({ channel_id: chA });
    const file = tempFile('small.ndjson', ndjson([c1, responseLine(c1), '', responseLine(c1), c2, '   ', responseLine(c2)]));
    const first = parseSuccess(await runCli(['import', '--account', String(a.accountId), '--file', file], {}, SMALL));
    assert.deepEqual(first, { conversations: 2, responses: 3 });
    const stored = await inDb(async (db) => {
      const counts = await recordCounts(db, a.accountId);
      assert.deepEqual(counts, { conversations: 2, responses: 3 });
      const [rc] = await rows<{ response_count: number }>(db, sql`SELECT response_count FROM conversations WHERE id = ${c1.conversation_id}`);
      assert.equal(rc?.response_count, 2);
      return { a: await snapshotAccount(db, a.accountId), b: await snapshotAccount(db, b.accountId) };
    });
    const second = parseSuccess(await runCli(['import', '--account', String(a.accountId), '--file', file], {}, SMALL));
    assert.deepEqual(second, first);
    await inDb(async (db) => {
      assert.deepEqual({ a: await snapshotAccount(db, a.accountId), b: await snapshotAccount(db, b.accountId) }, stored);
    });
  });

  it('reads a file with a byte-order mark and CRLF line endings', async () => {
    const c = conversationLine({ channel_id: chA, title: 'Windows export' });
    const file = tempFile('crlf.ndjson', `\ufeff${[c, responseLine(c)].map((l) => JSON.stringify(l)).join('\r\n')}\r\n`);
    assert.deepEqual(parseSuccess(await runCli(['import', '--account', String(a.accountId), '--file', file], {}, SMALL)), { conversations: 1, responses: 1 });
    await inDb(async (db) => {
      const [row] = await rows<{ title: string }>(db, sql`SELECT title FROM conversations WHERE id = ${c.conversation_id}`);
      assert.equal(row?.title, 'Windows export');
    });
  });

  type Bad = { name: string; lines: () => Array<object | string>; at: number[]; problem: RegExp };
  const BAD: Bad[] = [
    {
      name: 'a line that is not JSON',
      lines: () => {
        const c = conversationLine({ channel_id: chA });
        return [c, responseLine(c), '{"type":"response"'];
      },
      at: [3],
      problem: /JSON/,
    },
    {
      name: 'an impossible timestamp and a negative count',
      lines: () => {
        const c = conversationLine({ channel_id: chA, created_at: '2026-02-30 10:00:00' });
        return [c, responseLine(c, { likes: -2 })];
      },
      at: [1, 2],
      problem: /created_at/,
    },
    {
      name: 'a response before its conversation',
      lines: () => {
        const c = conversationLine({ channel_id: chA });
        return [conversationLine({ channel_id: chA }), responseLine(c), c];
      },
      at: [2],
      problem: /conversation/,
    },
    {
      name: "another account's conversation id",
      lines: () => [conversationLine({ channel_id: chA }), { ...bConv, channel_id: chA, title: 'Hijack' }],
      at: [2],
      problem: /another account/,
    },
  ];

  const bothAccounts = (db: Db) => Promise.all([snapshotAccount(db, a.accountId), snapshotAccount(db, b.accountId)]);
  /** Both accounts after the previous rejection: the next one must leave them exactly so. */
  let state: unknown;
  for (const c of BAD) {
    it(`rejects ${c.name}: non-zero exit, the line numbers on one stderr line, nothing written`, async () => {
      state ??= await inDb(bothAccounts);
      const before = state;
      const file = tempFile('bad.ndjson', ndjson(c.lines()));
      const r = await runCli(['import', '--account', String(a.accountId), '--file', file], {}, SMALL);
      assert.notEqual(r.code, 0, `exit code; stdout ${r.stdout}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, `one stderr line: ${JSON.stringify(r.stderr)}`);
      for (const n of c.at) assert.match(r.stderr, new RegExp(`\\bline ${n}\\b`));
      assert.match(r.stderr, c.problem);
      state = await inDb(bothAccounts);
      assert.deepEqual(state, before, 'nothing written to either account');
    });
  }

  it('imports 60,000 lines with progress on stderr and still one JSON object on stdout', async () => {
    const { acct, channel } = await inDb(async () => ({ acct: await createTestAccount('Bulk'), channel: (await newChannelIds(1))[0]! }));
    const { file, lines } = writeBigFile(channel, 10_000, 5);
    assert.equal(lines, 60_000);
    // A hang guard, not a speed figure (that is `npm run bench:import`): on PGlite beside other work it takes ~8 s.
    const r = await runCli(['import', '--account', String(acct.accountId), '--file', file], {}, 60_000);
    const out = parseSuccess(r);
    assert.deepEqual(out, { conversations: 10_000, responses: 50_000 });
    assert.ok(r.stderr.trim().length > 0, 'progress on stderr');
    await inDb(async (db) => {
      assert.deepEqual(await recordCounts(db, acct.accountId), { conversations: 10_000, responses: 50_000 });
      const [acc] = await rows<{ conversation_count: number; response_count: number }>(
        db,
        sql`
        SELECT conversation_count, response_count FROM accounts WHERE id = ${acct.accountId}`,
      );
      assert.deepEqual(acc, { conversation_count: 10_000, response_count: 50_000 });
    });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it('an import killed mid-way leaves nothing of its file, and the database opens afterwards', async (t) => {
    const { acct, channel } = await inDb(async () => ({ acct: await createTestAccount('Killed'), channel: (await newChannelIds(1))[0]! }));
    const { file } = writeBigFile(channel, 10_000, 5);
    const size = fs.statSync(file).size;
    const child = spawnCli(['import', '--account', String(acct.accountId), '--file', file]);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    let readAt: number | null = null;
    let done = false;
    void exited.then(() => {
      done = true;
    });
    const deadline = Date.now() + 60_000;
    while (!done) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        assert.fail(`the import never started reading: ${stderr}`);
      }
      const pos = readPosition(child.pid!, file);
      // A third of the file is past the read-ahead buffers: the import's transaction is staging lines.
      if ((pos !== null && pos >= size / 3) || /checking references/.test(stderr)) {
        readAt = pos;
        child.kill('SIGKILL');
        break;
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    const end = await exited;
    assert.equal(end.signal, 'SIGKILL', `killed during the import (it ended by itself: code ${end.code}, stdout ${stdout}, stderr ${stderr})`);
    t.diagnostic(`killed at byte ${readAt ?? '(file closed)'} of ${size}; stderr: ${JSON.stringify(stderr)}`);
    assert.ok(readAt === null || readAt < size, `killed at byte ${readAt} of ${size}`);
    assert.equal(stdout, '');

    await inDb(async (db) => {
      assert.deepEqual(await recordCounts(db, acct.accountId), { conversations: 0, responses: 0 });
      const [ch] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM channels WHERE id = ${channel}`);
      assert.equal(ch?.n, 0, 'no channel from the killed file');
    });
    // The killed process left a stale lock (PGlite); the CLI takes it over and the directory works.
    const c = conversationLine({ channel_id: channel });
    const after = parseSuccess(
      await runCli(['import', '--account', String(acct.accountId), '--file', tempFile('after.ndjson', ndjson([c, responseLine(c)]))], {}, SMALL),
    );
    assert.deepEqual(after, { conversations: 1, responses: 1 });
    await inDb(async (db) => {
      assert.deepEqual(await recordCounts(db, acct.accountId), { conversations: 1, responses: 1 });
    });
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
