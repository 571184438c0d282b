/**
 * Embeddings of knowledge-base passages under the account's endpoint, and retrieval that fuses
 * them with BM25 by reciprocal rank fusion (docs/decisions/model-per-account.md). The relevance
 * floor still applies to the lexical relevance: embeddings reorder what is found, they do not make
 * a passage relevant (a similarity floor would have to be tuned per model).
 */
import { getDb } from '../../db/client';
import { listChunksToEmbed, listEmbeddedPassages, storeChunkEmbeddings } from '../../db/queries/chunk-embeddings';
import type { StoredModelEndpoint } from '../bot/settings';
import { effectiveBotSettings } from '../bot/settings';
import { processSingleton } from '../core/process';
import type { RankedPassage } from '../knowledge/ranking';
import { checkedEmbeddings, EMBEDDINGS_MAX_BYTES, endpointClient } from './endpoint-client';

/** Passages sent in one embeddings request, and embedded per background run at most. */
const BATCH = 32;
const MAX_PER_RUN = 5000;
/** Passages compared with a question at most (the account's first ones by upload). */
const MAX_COMPARED = 5000;
/** RRF's usual constant: a passage's share is 1 / (K + rank). */
const RRF_K = 60;
/** How often an answer may start a background run for passages uploaded since (per account and process). */
const RESCHEDULE_MS = 30_000;
const EMBED_TIMEOUT_MS = 10_000;

/** This process's runs (per process by nature: a run belongs to the instance that started it; rows are upserted). */
type Runs = { running: Map<number, Promise<number>>; lastStarted: Map<number, number> };
const runs = () => processSingleton('svc.embeddingRuns', (): Runs => ({ running: new Map(), lastStarted: new Map() }));

/** The texts' embeddings, each request capped in bytes and time and the whole call by `signal`; refused unless valid. */
async function embed(endpoint: StoredModelEndpoint, texts: string[], signal?: AbortSignal): Promise<number[][]> {
  const client = await endpointClient(endpoint, { timeoutMs: EMBED_TIMEOUT_MS, maxRetries: 2, maxBytes: EMBEDDINGS_MAX_BYTES });
  const r = await client.embeddings.create({ model: endpoint.embeddingModel, input: texts, encoding_format: 'float' }, { signal });
  return checkedEmbeddings(r, texts.length);
}

/** Embeds the account's passages that have no embedding under its current model; returns how many it stored. */
export async function embedPendingPassages(accountId: number): Promise<number> {
  const { endpoint } = await effectiveBotSettings(accountId);
  if (!endpoint?.embeddingModel) return 0;
  const db = await getDb();
  let stored = 0;
  while (stored < MAX_PER_RUN) {
    const todo = await listChunksToEmbed(db, accountId, endpoint.embeddingModel, BATCH);
    if (todo.length === 0) break;
    const vectors = await embed(
      endpoint,
      todo.map((c) => `${c.context}\n${c.content}`),
    );
    await storeChunkEmbeddings(
      db,
      accountId,
      endpoint.embeddingModel,
      todo.map((c, i) => ({ chunkId: c.id, embedding: vectors[i]! })),
    );
    stored += todo.length;
  }
  return stored;
}

/** Starts a background run for the account unless one is running here; failures go to the log only. */
export function scheduleEmbeddings(accountId: number): Promise<number> {
  const r = runs();
  const current = r.running.get(accountId);
  if (current) return current;
  r.lastStarted.set(accountId, Date.now());
  const run = embedPendingPassages(accountId)
    .catch((e) => {
      console.error(`embedding passages of account ${accountId} failed: ${(e as Error).message}`);
      return 0;
    })
    .finally(() => r.running.delete(accountId));
  r.running.set(accountId, run);
  return run;
}

/** Passages uploaded since the last run get embedded: an answer starts a run at most every RESCHEDULE_MS. */
function catchUp(accountId: number) {
  const last = runs().lastStarted.get(accountId) ?? 0;
  if (Date.now() - last >= RESCHEDULE_MS) void scheduleEmbeddings(accountId);
}

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
};

export type SimilarPassage = Omit<RankedPassage, 'score' | 'relevance' | 'matched' | 'asked' | 'evidence' | 'names'> & { similarity: number };

/** The account's embedded passages most similar to the text, best first. */
export async function rankByEmbedding(
  accountId: number,
  endpoint: StoredModelEndpoint,
  text: string,
  limit: number,
  signal?: AbortSignal,
): Promise<SimilarPassage[]> {
  catchUp(accountId);
  const db = await getDb();
  const [passages, [query]] = await Promise.all([
    listEmbeddedPassages(db, accountId, endpoint.embeddingModel, MAX_COMPARED),
    embed(endpoint, [text.slice(0, 2000)], signal),
  ]);
  if (!query) return [];
  return passages
    .map(({ embedding, ...p }) => ({ ...p, similarity: cosine(query, embedding) }))
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, limit);
}

const key = (p: { document_id: string; ordinal: number }) => `${p.document_id}:${p.ordinal}`;

/**
 * Reciprocal rank fusion: each passage scores the sum of 1 / (RRF_K + rank) over the lists it is
 * in. A passage only the embeddings found joins with no lexical evidence (relevance 0: the floor
 * never uses it alone). Ties keep the BM25 order.
 */
export function fuseRankings(lexical: RankedPassage[], semantic: SimilarPassage[]): RankedPassage[] {
  const fused = new Map<string, { p: RankedPassage; rrf: number; order: number }>();
  for (const [i, p] of lexical.entries()) fused.set(key(p), { p, rrf: 1 / (RRF_K + i + 1), order: i });
  const asked = lexical[0]?.asked ?? 0;
  const names = lexical[0]?.names ?? [];
  semantic.forEach((s, i) => {
    const share = 1 / (RRF_K + i + 1);
    const hit = fused.get(key(s));
    if (hit) hit.rrf += share;
    else {
      const { similarity: _s, ...rest } = s;
      fused.set(key(s), { p: { ...rest, score: 0, relevance: 0, matched: 0, asked, evidence: [], names }, rrf: share, order: lexical.length + i });
    }
  });
  return [...fused.values()].sort((a, b) => b.rrf - a.rrf || a.order - b.order).map((f) => f.p);
}
