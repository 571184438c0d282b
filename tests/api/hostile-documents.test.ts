// One database: PostgreSQL — the limits are the document workers', before anything is stored
/**
 * Hostile documents (issue 9 item 1): every document is read in a worker thread under a time,
 * memory, inflation and text limit. Each case asserts its refusal (status and a detail naming
 * the limit) and its measured time to answer; and while the worst of them are being read,
 * /healthz and the Customer API keep answering in well under 100 ms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isAppError } from '../../lib/core/errors';
import { addKnowledgeDocument } from '../../lib/knowledge/service';
import { V2 } from '../helpers/api-fixtures';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import {
  deeplyNestedHtml,
  docxBombDeclared,
  docxBombLying,
  docxHugeEntry,
  docxManyParts,
  heavyPdf,
  malformedZip,
  structuredDocx,
} from '../fixtures/widget-files';

const TIMEOUT_MS = 3000;
const MEMORY_MB = 96;
const MAX_TEXT = 1_000_000;

let server: TestServer;
before(
  async () => {
    server = await startTestServer({
      DOCUMENT_TIMEOUT_MS: String(TIMEOUT_MS),
      DOCUMENT_WORKER_MEMORY_MB: String(MEMORY_MB),
      DOCUMENT_MAX_TEXT_CHARS: String(MAX_TEXT),
      DOCUMENT_QUEUE_MAX: '64',
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

/** Adds a knowledge-base document; returns how it ended and how long it took. */
async function addTimed(accountId: number, filename: string, data: Buffer) {
  const started = Date.now();
  try {
    const doc = await addKnowledgeDocument(accountId, filename, data);
    return { ok: true as const, ms: Date.now() - started, chunks: doc.chunks };
  } catch (e) {
    if (!isAppError(e)) throw e;
    return { ok: false as const, ms: Date.now() - started, status: e.status, detail: e.message };
  }
}

const LIMIT_MS = TIMEOUT_MS + 3000;

describe('hostile documents are refused under their limits', () => {
  const cases: Array<{ name: string; file: string; make: () => Buffer; status: number; detail: RegExp; withinMs: number }> = [
    {
      name: 'zip bomb (1 GiB declared)',
      file: 'bomb.docx',
      make: () => docxBombDeclared(1024),
      status: 413,
      detail: /declares \d+ bytes uncompressed; at most 67108864 bytes/,
      withinMs: 2000,
    },
    {
      name: 'zip bomb that lies about its size',
      file: 'liar.docx',
      make: () => docxBombLying(1024),
      status: 413,
      detail: /inflates to more than the 1000 bytes it declares/,
      withinMs: 2000,
    },
    {
      name: 'DOCX of many parts, 100 MiB in all',
      file: 'parts.docx',
      make: () => docxManyParts(20, 5),
      status: 413,
      detail: /bytes uncompressed; at most 67108864/,
      withinMs: LIMIT_MS,
    },
    { name: 'malformed ZIP', file: 'broken.docx', make: malformedZip, status: 400, detail: /not a valid ZIP container/, withinMs: 2000 },
    {
      name: 'DOCX with one huge part (200,000 paragraphs)',
      file: 'huge.docx',
      make: () => docxHugeEntry(200_000),
      status: 413,
      detail: new RegExp(`took longer than ${TIMEOUT_MS} ms|more than ${MEMORY_MB} MB of memory`),
      withinMs: LIMIT_MS,
    },
    // Which limit stops it first depends on the machine: a loaded one hits the time or memory
    // limit, a quiet one reads the 400,000 runs in ~2 s and reaches the text cap. Refused either way.
    {
      name: 'slow PDF (20 pages × 20,000 text runs)',
      file: 'slow.pdf',
      make: () => heavyPdf(20, 20_000),
      status: 413,
      detail: new RegExp(`took longer than ${TIMEOUT_MS} ms|more than ${MEMORY_MB} MB of memory|more than ${MAX_TEXT} characters`),
      withinMs: LIMIT_MS,
    },
    {
      name: 'huge text (5 MB)',
      file: 'huge.txt',
      make: () => Buffer.alloc(5_000_000, 'word '),
      status: 413,
      detail: new RegExp(`more than ${MAX_TEXT} characters`),
      withinMs: LIMIT_MS,
    },
    {
      name: 'enormous HTML (5 MB of tables)',
      file: 'tables.html',
      make: () => Buffer.from(`<html><body>${'<table><tr><td>cell</td><td>cell</td></tr></table>'.repeat(100_000)}</body></html>`),
      status: 413,
      detail: new RegExp(`more than ${MAX_TEXT} characters`),
      withinMs: LIMIT_MS,
    },
    {
      name: 'file over the knowledge-base size',
      file: 'big.md',
      make: () => Buffer.alloc(21 * 1024 * 1024, 'a'),
      status: 413,
      detail: /larger than 20971520 bytes/,
      withinMs: 2000,
    },
  ];
  it('a well-formed Word document is read (first: the worker is warm)', async () => {
    const acct = await createTestAccount();
    const r = await addTimed(acct.accountId, 'policy.docx', structuredDocx());
    assert.ok(r.ok, JSON.stringify(r));
  });

  for (const c of cases) {
    it(c.name, { timeout: 60_000 }, async () => {
      const acct = await createTestAccount();
      const r = await addTimed(acct.accountId, c.file, c.make());
      assert.equal(r.ok, false, `${c.name} was accepted`);
      if (r.ok) return;
      assert.equal(r.status, c.status, r.detail);
      assert.match(r.detail, c.detail);
      assert.ok(r.ms < c.withinMs, `${c.name}: answered in ${r.ms} ms (bound ${c.withinMs})`);
      console.log(`# ${c.name}: ${r.status} in ${r.ms} ms — ${r.detail}`);
    });
  }

  it('deeply nested HTML (300,000 levels) is read in linear time', { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    const r = await addTimed(acct.accountId, 'deep.html', deeplyNestedHtml(300_000));
    assert.ok(r.ok, JSON.stringify(r));
    assert.ok(r.ms < LIMIT_MS, `read in ${r.ms} ms`);
    console.log(`# nested HTML 300,000 deep: read in ${r.ms} ms`);
  });
});

describe('the service keeps answering while hostile documents are read', () => {
  type Probe = { latencies: number[]; loopDelayMaxMs: number; loopDelayP99Ms: number };
  /** Calls /healthz and a Customer API list in turn while `busy()` runs; records their latencies and the event-loop delay. */
  async function probeWhile(accountKey: string, busy: () => Promise<unknown>): Promise<Probe> {
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const latencies: number[] = [];
    let running = true;
    const probe = (async () => {
      while (running) {
        for (const path of ['/healthz', `${V2}/response?resultsPerPage=5`]) {
          const started = performance.now();
          const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${accountKey}` } });
          await res.arrayBuffer();
          latencies.push(performance.now() - started);
          assert.equal(res.status, 200, path);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await busy();
    running = false;
    await probe;
    loop.disable();
    latencies.sort((a, b) => a - b);
    return { latencies, loopDelayMaxMs: loop.max / 1e6, loopDelayP99Ms: loop.percentile(99) / 1e6 };
  }
  const pct = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
  const show = (p: Probe) =>
    `${p.latencies.length} probes p50 ${pct(p.latencies, 0.5).toFixed(1)} ms, p90 ${pct(p.latencies, 0.9).toFixed(1)} ms, max ${pct(p.latencies, 1).toFixed(1)} ms; event-loop delay p99 ${p.loopDelayP99Ms.toFixed(1)} ms, max ${p.loopDelayMaxMs.toFixed(1)} ms`;

  it('/healthz and the Customer API answer in well under 100 ms', { timeout: 120_000 }, async () => {
    const acct = await createTestAccount();
    const hostile = [
      () => docxHugeEntry(200_000),
      () => heavyPdf(20, 20_000),
      () => deeplyNestedHtml(300_000),
      () => docxManyParts(20, 5),
      () => docxHugeEntry(200_000),
      () => heavyPdf(20, 20_000),
    ].map((make, i) => ({ name: `hostile-${i}.${i % 3 === 1 ? 'pdf' : i % 3 === 2 ? 'html' : 'docx'}`, data: make() }));
    // The same probes with nothing being read: the machine's own latency (it is shared and busy).
    await new Promise((r) => setTimeout(r, 1000));
    const idle = await probeWhile(acct.key, () => new Promise((r) => setTimeout(r, 4000)));
    let results: Awaited<ReturnType<typeof addTimed>>[] = [];
    const busy = await probeWhile(acct.key, async () => {
      results = await Promise.all(hostile.map((h) => addTimed(acct.accountId, h.name, h.data)));
    });
    console.log(`# idle: ${show(idle)}`);
    console.log(`# while ${hostile.length} hostile documents are read: ${show(busy)}`);
    assert.ok(results.filter((r) => !r.ok).length >= 4, JSON.stringify(results));
    assert.ok(busy.latencies.length >= 20, `only ${busy.latencies.length} probes`);
    // Bounds: absolute on a quiet machine; on this shared one, never more than that beyond the
    // same probes' idle figures (measured a moment before on the same machine).
    const bound = (absolute: number, idleValue: number, margin: number) => Math.max(absolute, idleValue + margin);
    // The main thread is never blocked by a document: no event-loop stall near 100 ms.
    const stallBound = bound(100, idle.loopDelayMaxMs, 100);
    assert.ok(busy.loopDelayMaxMs < stallBound, `event loop stalled ${busy.loopDelayMaxMs.toFixed(1)} ms (bound ${stallBound.toFixed(0)})`);
    const p50Bound = bound(25, pct(idle.latencies, 0.5), 25);
    const p90Bound = bound(100, pct(idle.latencies, 0.9), 50);
    assert.ok(pct(busy.latencies, 0.5) < p50Bound, `median ${pct(busy.latencies, 0.5).toFixed(1)} ms (bound ${p50Bound.toFixed(0)})`);
    assert.ok(pct(busy.latencies, 0.9) < p90Bound, `p90 ${pct(busy.latencies, 0.9).toFixed(1)} ms (bound ${p90Bound.toFixed(0)})`);
  });
});
