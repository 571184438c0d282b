// One database: PostgreSQL — the limit is the document worker's heap, before anything is stored
/**
 * The document worker's memory limit (issue 9 item 1, `resourceLimits`): with a LOW heap limit and
 * a LONG wall-clock limit, a small DOCX whose parsing needs far more memory than its size is
 * stopped by memory, not time, and refused with the memory message; the pool replaces the dead
 * thread, so the next document is read and /healthz keeps answering.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isAppError } from '../../lib/core/errors';
import { addKnowledgeDocument } from '../../lib/knowledge/service';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import { docxHugeEntry, structuredDocx } from '../fixtures/widget-files';

const MEMORY_MB = 32;
const TIMEOUT_MS = 60_000;

let server: TestServer;
before(
  async () => {
    server = await startTestServer({
      DOCUMENT_WORKER_MEMORY_MB: String(MEMORY_MB),
      DOCUMENT_TIMEOUT_MS: String(TIMEOUT_MS),
      DOCUMENT_MAX_TEXT_CHARS: '50000000',
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

describe('the document worker memory limit', () => {
  it('stops a document that needs more memory than DOCUMENT_WORKER_MEMORY_MB, and the service stays healthy', { timeout: 60_000 }, async () => {
    const acct = await createTestAccount();
    // 60,000 paragraphs: ~11 KB deflated, ~4 MB of XML; mammoth's document tree needs far more than 32 MB.
    const hostile = docxHugeEntry(60_000);
    assert.ok(hostile.length < 64 * 1024, `the document itself is small (${hostile.length} bytes)`);
    const started = Date.now();
    const err = await addKnowledgeDocument(acct.accountId, 'memory-hungry.docx', hostile).then(
      () => null,
      (e: unknown) => e,
    );
    const ms = Date.now() - started;
    assert.ok(isAppError(err), `refused with an AppError, got ${String(err)}`);
    assert.equal(err.status, 413);
    assert.equal(err.message, `Reading the document needed more than ${MEMORY_MB} MB of memory; it was stopped.`);
    assert.ok(ms < 15_000, `stopped by memory in ${ms} ms, long before the ${TIMEOUT_MS} ms time limit`);
    console.log(`# ${hostile.length}-byte DOCX stopped at ${MEMORY_MB} MB heap in ${ms} ms`);

    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    const next = await addKnowledgeDocument(acct.accountId, 'policy.docx', structuredDocx());
    assert.ok(next.chunks > 0, 'the next document is read by a fresh worker');
  });
});
