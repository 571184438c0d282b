import OpenAI from 'openai';
import type { StoredModelEndpoint } from '../bot/settings';
import { AppError } from '../core/errors';
import { openSecret } from '../core/secrets';
import { parseOutboundUrl, resolveOutboundTarget, UnsafeAddressError } from '../net/address';
import { outboundFetch } from '../net/outbound-fetch';

/** Bytes read from one chat answer at most, streamed or not (a long answer's stream is ~1 MiB). */
export const CHAT_MAX_BYTES = 4 * 1024 * 1024;
/** Bytes read from one embeddings answer at most (32 passages × 4,096 floats as JSON is ~3 MiB). */
export const EMBEDDINGS_MAX_BYTES = 8 * 1024 * 1024;
/** Dimensions of an embedding at most (the largest common models have 3,072). */
export const MAX_EMBEDDING_DIMENSIONS = 4096;

export type ClientLimits = { timeoutMs: number; maxRetries: number; maxBytes: number };

/** Throws AppError('invalid_request') naming what is wrong with the address (§16 outbound addresses). */
export async function checkEndpointAddress(baseUrl: string): Promise<void> {
  try {
    await resolveOutboundTarget(parseOutboundUrl(baseUrl));
  } catch (e) {
    if (e instanceof UnsafeAddressError)
      throw new AppError('invalid_request', `Base URL: ${e.message}.`, { errors: [{ param: 'base_url', message: e.message }] });
    throw e;
  }
}

/**
 * A client for the account's endpoint, its address checked now and again on every request, which
 * connects to the checked address (a DNS answer may change after saving); no redirect followed.
 */
export async function endpointClient(endpoint: StoredModelEndpoint, limits: ClientLimits): Promise<OpenAI> {
  await checkEndpointAddress(endpoint.baseUrl);
  const apiKey = endpoint.apiKeySealed ? openSecret('model endpoint keys', endpoint.apiKeySealed) : 'unused';
  return new OpenAI({
    baseURL: endpoint.baseUrl,
    apiKey,
    maxRetries: limits.maxRetries,
    timeout: limits.timeoutMs,
    fetch: outboundFetch({ maxBytes: limits.maxBytes, timeoutMs: limits.timeoutMs, checkAddress: true }),
  });
}

/** A client for the operator's LLM_* endpoint (trusted, so any address), with the same byte and time caps. */
export function operatorClient(baseUrl: string, apiKey: string | undefined, limits: ClientLimits): OpenAI {
  return new OpenAI({
    baseURL: baseUrl,
    apiKey: apiKey || 'unused',
    maxRetries: limits.maxRetries,
    timeout: limits.timeoutMs,
    fetch: outboundFetch({ maxBytes: limits.maxBytes, timeoutMs: limits.timeoutMs, checkAddress: false }),
  });
}

/** Embeddings an endpoint returned that are refused: the wrong count, not finite, too many dimensions. */
export class InvalidEmbeddingsError extends Error {}

/** The vectors of an embeddings answer in input order, each checked; throws InvalidEmbeddingsError. */
export function checkedEmbeddings(answer: { data?: unknown }, count: number): number[][] {
  const data = answer?.data;
  if (!Array.isArray(data) || data.length !== count) throw new InvalidEmbeddingsError(`expected ${count} embeddings`);
  const out = new Array<number[]>(count);
  let dimensions = -1;
  for (const d of data as Array<{ index?: unknown; embedding?: unknown }>) {
    const i = d?.index;
    const v = d?.embedding;
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= count || out[i])
      throw new InvalidEmbeddingsError('the embeddings are not numbered 0 to n − 1');
    if (!Array.isArray(v) || v.length === 0 || v.length > MAX_EMBEDDING_DIMENSIONS)
      throw new InvalidEmbeddingsError(`an embedding must have 1 to ${MAX_EMBEDDING_DIMENSIONS} dimensions`);
    if (dimensions >= 0 && v.length !== dimensions) throw new InvalidEmbeddingsError('the embeddings differ in dimensions');
    dimensions = v.length;
    for (const x of v)
      if (typeof x !== 'number' || !Number.isFinite(x)) throw new InvalidEmbeddingsError('an embedding holds a value that is not a finite number');
    out[i] = v as number[];
  }
  return out;
}
