/**
 * EXPORTS_PER_ACCOUNT holds across instances (docs/contracts.md §10 limits): two real server processes on
 * one PostgreSQL and one Redis; an account's two stalled exports on different instances leave no
 * third on either (429 + Retry-After), and the stall limit gives the slots back to every instance.
 *
 * Needs DATABASE_URL (a fresh database) and REDIS_URL (its own db index; each run its own prefix).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { conversationLine, createTestAccount, importLines, newChannelIds, responseLine } from '../helpers/builders';
import { ts, V2 } from '../helpers/api-fixtures';
import { startInstances, type Cluster } from '../helpers/instances';

const ready = Boolean(process.env.DATABASE_URL && process.env.REDIS_URL);
const PREFIX = `${process.env.REDIS_PREFIX ?? 'svc-test:'}multi-export-${process.pid}-${Date.now()}:`;
const STALL_SECONDS = 6;
let cluster: Cluster;

before(
  async () => {
    if (!ready) return;
    cluster = await startInstances(2, {
      DATABASE_URL: process.env.DATABASE_URL!,
      REDIS_URL: process.env.REDIS_URL!,
      REDIS_PREFIX: PREFIX,
      EXPORTS_PER_ACCOUNT: '2',
      EXPORT_STALL_SECONDS: String(STALL_SECONDS),
    });
  },
  { timeout: 180_000 },
);

after(
  async () => {
    await cluster?.close();
    const { closeDatabase } = await import('../../db/client');
    await closeDatabase();
  },
  { timeout: 60_000 },
);

type Stalled = { status: number; head: string; socket: net.Socket };

/** Opens an export on `base`, reads its first chunk (the status line), then never reads again. */
function stalledExport(base: string, key: string): Promise<Stalled> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('error', () => {});
    socket.once('connect', () => socket.write(`GET ${V2}/response/export HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n\r\n`));
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      const head = chunk.toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      if (!status) reject(new Error(`no status line: ${head.slice(0, 100)}`));
      resolve({ status, head, socket });
    });
  });
}

describe('exports per account across instances', { skip: !ready && 'needs DATABASE_URL and REDIS_URL' }, () => {
  it('two stalled exports on two instances leave no third on either, until the stall limit frees them', { timeout: 120_000 }, async () => {
    const acct = await createTestAccount();
    const [ch] = await newChannelIds(1);
    const conv = conversationLine({ channel_id: ch! });
    await importLines(acct.accountId, [
      conv,
      ...Array.from({ length: 2500 }, (_, i) => responseLine(conv, { created_at: ts(i), answer: `${i} ${'m'.repeat(4000)}` })),
    ]);
    const [one, two] = cluster.urls as [string, string];
    const held = [await stalledExport(one, acct.key), await stalledExport(two, acct.key)];
    for (const h of held) assert.equal(h.status, 200, h.head.slice(0, 200));
    for (const base of [one, two]) {
      const third = await stalledExport(base, acct.key);
      third.socket.destroy();
      assert.equal(third.status, 429, `${base}: ${third.head.slice(0, 300)}`);
      assert.match(third.head, new RegExp(`\\r\\nretry-after: ${STALL_SECONDS}\\r\\n`, 'i'));
      assert.match(third.head, /"type":"urn:svc:problem:rate-limited"/);
    }
    // Another account is not limited by this one.
    const other = await createTestAccount();
    const free = await fetch(`${one}${V2}/response/export`, { headers: { authorization: `Bearer ${other.key}` } });
    assert.equal(free.status, 200);
    await free.text();
    // After the stall limit both slots are back, on every instance.
    await new Promise((r) => setTimeout(r, (STALL_SECONDS + 2) * 1000));
    for (const h of held) h.socket.destroy();
    for (const base of [two, one]) {
      const res = await fetch(`${base}${V2}/response/export?query=zzz-none`, { headers: { authorization: `Bearer ${acct.key}` } });
      assert.equal(res.status, 200, base);
      await res.text();
    }
  });
});
