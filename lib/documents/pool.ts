import { availableParallelism } from 'node:os';
import path from 'node:path';
import Piscina from 'piscina';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { processSlot } from '../core/process';
import type { WorkerResult } from './extract-worker';
import type { ReadMail } from './mail';

/**
 * Documents are read off the main thread, in a pool of worker threads (piscina), each with a
 * memory limit (`resourceLimits`), a wall-clock limit per document, and limits on the bytes a
 * container may inflate to and on the text it may yield. A document over any limit is refused
 * with an AppError whose detail names the limit; the main thread keeps serving meanwhile.
 *
 * The pool and its queue are per process, kept on globalThis: server.ts and the route handlers
 * Next bundles hold separate copies of this module and must share one set of threads.
 */
export type ExtractionLimits = { maxInflatedBytes: number; maxEntries: number; maxTextChars: number };

type Dispatcher = { pool: Piscina; running: number; waiting: Array<() => void>; threads: number };
const held = processSlot<Dispatcher>('svc.documentPool');

/** This process runs TypeScript through tsx (tests, dev, the CLI), which its worker threads need too. */
const underTsx = () => process.execArgv.some((a) => /[\\/]tsx[\\/]|^tsx$/.test(a));

/**
 * The worker's file, found from the project root in every runtime: its source under tsx, else the
 * production build's compiled copy (scripts/build.mjs).
 */
export function extractionWorkerFile(): string {
  return underTsx() ? path.join(process.cwd(), 'lib', 'documents', 'extract-worker.ts') : path.join(process.cwd(), 'dist', 'extract-worker.mjs');
}

export function documentThreads(): number {
  return getEnv().DOCUMENT_WORKERS ?? Math.max(1, Math.min(4, availableParallelism() - 1));
}

function dispatcher(): Dispatcher {
  let d = held.get();
  if (!d) {
    const env = getEnv();
    const threads = documentThreads();
    const pool = new Piscina({
      filename: extractionWorkerFile(),
      // One thread stays loaded, so a document's time limit is not spent starting one.
      minThreads: 1,
      maxThreads: threads,
      idleTimeout: 30_000,
      // Below the main thread's priority: parsing yields the CPU to requests.
      niceIncrement: process.platform === 'linux' ? 10 : 0,
      resourceLimits: {
        maxOldGenerationSizeMb: env.DOCUMENT_WORKER_MEMORY_MB,
        maxYoungGenerationSizeMb: Math.max(4, Math.min(32, Math.floor(env.DOCUMENT_WORKER_MEMORY_MB / 8))),
        stackSizeMb: 4,
      },
      // No inherited flags: the worker is plain ESM with npm dependencies and needs none, and
      // Node refuses many of an operator's in a worker (`--max-old-space-size`, `--expose-gc`,
      // `--input-type` of `node -e`): the pool would fail at start and take the server with it.
      // Its heap limit is resourceLimits above. Under tsx the thread loads tsx to read the source.
      execArgv: underTsx() ? ['--import', 'tsx'] : [],
    });
    // A thread that fails outside a task must not take the process down (an unhandled 'error').
    pool.on('error', (e: unknown) => console.error('document worker failed:', e));
    held.set((d = { pool, running: 0, waiting: [], threads }));
  }
  return d;
}

export function extractionLimits(): ExtractionLimits {
  const env = getEnv();
  return { maxInflatedBytes: env.DOCUMENT_MAX_INFLATED_BYTES, maxEntries: 10_000, maxTextChars: env.DOCUMENT_MAX_TEXT_CHARS };
}

/**
 * A slot in the pool. Documents beyond the threads wait here (so a document's time limit counts
 * its own reading, not the queue); beyond DOCUMENT_QUEUE_MAX waiting ones, the service is busy.
 */
async function acquire(d: Dispatcher): Promise<() => void> {
  if (d.running >= d.threads) {
    if (d.waiting.length >= getEnv().DOCUMENT_QUEUE_MAX) {
      throw new AppError('unavailable', 'Too many documents are being read right now; try again shortly.', { headers: { 'Retry-After': '5' } });
    }
    await new Promise<void>((resolve) => d.waiting.push(resolve));
  } else d.running++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = d.waiting.shift();
    if (next) next();
    else d.running--;
  };
}

/** Markdown-like text of a document (see extract-worker.ts), read in a worker under every limit. */
export async function extractInWorker(bytes: Uint8Array, contentType: string): Promise<string> {
  const env = getEnv();
  const d = dispatcher();
  const release = await acquire(d);
  const timeout = AbortSignal.timeout(env.DOCUMENT_TIMEOUT_MS);
  let result: WorkerResult;
  try {
    result = await d.pool.run({ bytes, contentType, limits: extractionLimits() }, { signal: timeout });
  } catch (e) {
    if (timeout.aborted) {
      throw new AppError('payload_too_large', `The document took longer than ${env.DOCUMENT_TIMEOUT_MS} ms to read; it was stopped.`);
    }
    if ((e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new AppError('payload_too_large', `Reading the document needed more than ${env.DOCUMENT_WORKER_MEMORY_MB} MB of memory; it was stopped.`);
    }
    console.error('document extraction failed:', e);
    throw new AppError('invalid_request', 'The document could not be read.');
  } finally {
    release();
  }
  if (result.ok) return result.text;
  throw new AppError(result.reason === 'too_large' ? 'payload_too_large' : 'invalid_request', result.detail);
}

/**
 * A received mail read in a worker (./mail.ts) under the documents' time and memory limits: the
 * MIME, the reply's new text, the attachments. A mail the worker cannot read in time is refused.
 */
export async function readMailInWorker(raw: Uint8Array): Promise<ReadMail> {
  const env = getEnv();
  const d = dispatcher();
  const release = await acquire(d);
  let timeout = AbortSignal.timeout(env.DOCUMENT_TIMEOUT_MS);
  try {
    try {
      return (await d.pool.run({ raw, replies: true }, { name: 'readMail', signal: timeout })) as ReadMail;
    } catch (e) {
      if (!timeout.aborted) throw e;
      // The reply parser ran out of time: the mail is read again without it (its whole text kept).
      timeout = AbortSignal.timeout(env.DOCUMENT_TIMEOUT_MS);
      return (await d.pool.run({ raw, replies: false }, { name: 'readMail', signal: timeout })) as ReadMail;
    }
  } catch (e) {
    if (timeout.aborted) throw new AppError('payload_too_large', `The mail took longer than ${env.DOCUMENT_TIMEOUT_MS} ms to read; it was stopped.`);
    if ((e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new AppError('payload_too_large', `Reading the mail needed more than ${env.DOCUMENT_WORKER_MEMORY_MB} MB of memory; it was stopped.`);
    }
    throw new AppError('invalid_request', `The mail could not be read: ${String((e as Error).message ?? e).slice(0, 200)}`);
  } finally {
    release();
  }
}

/** Starts the pool (its first thread loads the parsers) before the first document arrives. */
export function startDocumentPool(): void {
  dispatcher();
}

/** Stops the pool's threads (tests and shutdown); the next document starts a new pool. */
export async function closeDocumentPool(): Promise<void> {
  const d = held.get();
  held.clear();
  if (d) await d.pool.destroy();
}
