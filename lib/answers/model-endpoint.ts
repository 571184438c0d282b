/**
 * The account's own OpenAI-compatible endpoint (docs/contracts.md §16 "model per account"): base
 * URL, key (sealed at rest, never shown again) and embedding model, checked against the outbound
 * address rule on save, on "Test connection" and before every request.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import { validate } from '../accounts/service';
import type { AuditBy } from '../audit/contract';
import { effectiveBotSettings, getModelEndpointView, getStoredModelEndpoint, storeModelEndpoint } from '../bot/settings';
import { AppError } from '../core/errors';
import { sealSecret } from '../core/secrets';
import { getEnv } from '../env';
import { scheduleEmbeddings } from './embeddings';
import { UnsafeAddressError } from '../net/address';
import { OutboundResponseError } from '../net/outbound-fetch';
import { CHAT_MAX_BYTES, checkedEmbeddings, checkEndpointAddress, EMBEDDINGS_MAX_BYTES, endpointClient, InvalidEmbeddingsError } from './endpoint-client';

const modelName = z
  .string()
  .trim()
  .max(100, 'must be at most 100 characters')
  .regex(/^[\w.:/@-]*$/, 'letters, digits and . : / @ _ - only');

export const ModelEndpointInput = z.object({
  baseUrl: z.string().trim().max(2000, 'must be at most 2000 characters'),
  /** '' keeps the stored key. */
  apiKey: z.string().trim().max(1000, 'must be at most 1000 characters'),
  clearKey: z.boolean(),
  embeddingModel: modelName,
});
export type ModelEndpointInput = z.infer<typeof ModelEndpointInput>;
const NAMES = { baseUrl: 'base_url', apiKey: 'api_key', clearKey: 'clear_key', embeddingModel: 'embedding_model' };

/** How long "Test connection" waits for each request. */
const TEST_TIMEOUT_MS = 10_000;

/** Saves the endpoint ('' base URL removes it and its key); embeddings of the passages then follow in the background. */
export async function saveModelEndpoint(by: AuditBy, accountId: number, input: unknown) {
  const v = validate(ModelEndpointInput, input, NAMES);
  if (!v.baseUrl) {
    await storeModelEndpoint(by, accountId, { baseUrl: '', apiKeySealed: null, embeddingModel: '' });
    return getModelEndpointView(accountId);
  }
  await checkEndpointAddress(v.baseUrl);
  if (!v.apiKey && !v.clearKey) await refuseKeyForAnotherUrl(accountId, v.baseUrl);
  const apiKeySealed = v.apiKey ? sealSecret('model endpoint keys', v.apiKey) : v.clearKey ? null : undefined;
  await storeModelEndpoint(by, accountId, { baseUrl: v.baseUrl, apiKeySealed, embeddingModel: v.embeddingModel });
  if (v.embeddingModel) scheduleEmbeddings(accountId);
  return getModelEndpointView(accountId);
}

const sameUrl = (a: string, b: string) => {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
};

/**
 * A stored key goes only to the base URL it was entered for: with another base URL and an empty
 * key field, the key must be typed again (or cleared), on save and on "Test connection" alike.
 */
async function refuseKeyForAnotherUrl(accountId: number, baseUrl: string) {
  const stored = await getStoredModelEndpoint(accountId);
  if (stored?.apiKeySealed && !sameUrl(stored.baseUrl, baseUrl))
    throw new AppError('invalid_request', KEY_FOR_ANOTHER_URL, { errors: [{ param: 'api_key', message: 'enter the key again for the new base URL' }] });
}
export const KEY_FOR_ANOTHER_URL = 'The base URL changed: enter the API key again (or clear it). A saved key is only sent to the base URL it was entered for.';

export type ConnectionCheck = { name: 'Address' | 'Chat' | 'Embeddings'; ok: boolean; detail: string };

/**
 * "Test connection" with what the form holds (an empty key field: the stored key): the address,
 * one short chat completion with the bot's model, and one embedding when an embedding model is
 * named. Each check says plainly what worked or failed; a provider's own text is never shown.
 */
export async function testModelEndpoint(accountId: number, input: unknown): Promise<{ works: boolean; checks: ConnectionCheck[] }> {
  const v = validate(ModelEndpointInput, input, NAMES);
  if (!v.baseUrl)
    throw new AppError('invalid_request', 'Enter the base URL of your endpoint first.', { errors: [{ param: 'base_url', message: 'is required' }] });
  const checks: ConnectionCheck[] = [];
  try {
    await checkEndpointAddress(v.baseUrl);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return { works: false, checks: [{ name: 'Address', ok: false, detail: e.message }] };
  }
  if (!v.apiKey && !v.clearKey) await refuseKeyForAnotherUrl(accountId, v.baseUrl);
  const stored = await getStoredModelEndpoint(accountId);
  const apiKeySealed = v.apiKey ? sealSecret('model endpoint keys', v.apiKey) : v.clearKey ? null : (stored?.apiKeySealed ?? null);
  const target = { baseUrl: v.baseUrl, apiKeySealed, embeddingModel: v.embeddingModel };
  const limits = { timeoutMs: TEST_TIMEOUT_MS, maxRetries: 0 };
  const client = await endpointClient(target, { ...limits, maxBytes: CHAT_MAX_BYTES });
  const embedder = await endpointClient(target, { ...limits, maxBytes: EMBEDDINGS_MAX_BYTES });
  const model = (await effectiveBotSettings(accountId)).model || getEnv().LLM_MODEL;
  try {
    const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Reply with the word OK.' }], max_tokens: 5 });
    checks.push(
      r.choices?.[0]?.message
        ? { name: 'Chat', ok: true, detail: `model ${model} answered.` }
        : { name: 'Chat', ok: false, detail: `model ${model}: the endpoint's answer had no message.` },
    );
  } catch (e) {
    checks.push({ name: 'Chat', ok: false, detail: `model ${model}: ${describeFailure(e)}` });
  }
  if (v.embeddingModel) {
    try {
      const r = await embedder.embeddings.create({ model: v.embeddingModel, input: 'Test connection', encoding_format: 'float' });
      const n = checkedEmbeddings(r, 1)[0]!.length;
      checks.push({ name: 'Embeddings', ok: true, detail: `model ${v.embeddingModel} answered (${n} dimensions).` });
    } catch (e) {
      checks.push({ name: 'Embeddings', ok: false, detail: `model ${v.embeddingModel}: ${describeFailure(e)}` });
    }
  }
  return { works: checks.every((c) => c.ok), checks };
}

/**
 * What went wrong, in our words, never the provider's text nor a status code: "Test connection"
 * must not work as a port scanner, so a connection that failed and one that timed out read alike,
 * and an answer's status is only told as what it usually means for a model endpoint.
 */
export function describeFailure(e: unknown): string {
  const cause = e instanceof Error ? e.cause : undefined;
  if (cause instanceof UnsafeAddressError) return `Base URL: ${cause.message}.`;
  if (e instanceof InvalidEmbeddingsError) return `the endpoint's embeddings were refused: ${e.message}.`;
  if (cause instanceof OutboundResponseError && /redirect/.test(cause.message)) return 'the endpoint answered with an error (redirects are not followed).';
  if (e instanceof OpenAI.APIConnectionError) return `could not connect to the base URL, or no complete answer within ${TEST_TIMEOUT_MS / 1000} seconds.`;
  if (e instanceof OpenAI.APIError && e.status) {
    const s = e.status;
    if (s === 401 || s === 403) return 'the endpoint refused the key.';
    if (s === 404) return 'the endpoint answered "not found": check the base URL (it often ends in /v1) and the model name.';
    if (s === 429) return 'the endpoint is limiting requests; try again later.';
    return 'the endpoint answered with an error.';
  }
  return "the endpoint's answer could not be read.";
}
