/**
 * The account's own OpenAI-compatible endpoint (docs/contracts.md §16 "model per account"): base
 * URL, key (sealed at rest, never shown again) and embedding model, checked against the outbound
 * address rule on save, on "Test connection" and before every request.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import { validate } from '../accounts/service';
import { effectiveBotSettings, getModelEndpointView, getStoredModelEndpoint, storeModelEndpoint } from '../bot/settings';
import { AppError } from '../core/errors';
import { sealSecret } from '../core/secrets';
import { getEnv } from '../env';
import { scheduleEmbeddings } from './embeddings';
import { checkEndpointAddress, endpointClient } from './endpoint-client';

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
export async function saveModelEndpoint(accountId: number, input: unknown) {
  const v = validate(ModelEndpointInput, input, NAMES);
  if (!v.baseUrl) {
    await storeModelEndpoint(accountId, { baseUrl: '', apiKeySealed: null, embeddingModel: '' });
    return getModelEndpointView(accountId);
  }
  await checkEndpointAddress(v.baseUrl);
  const apiKeySealed = v.apiKey ? sealSecret('model endpoint keys', v.apiKey) : v.clearKey ? null : undefined;
  await storeModelEndpoint(accountId, { baseUrl: v.baseUrl, apiKeySealed, embeddingModel: v.embeddingModel });
  if (v.embeddingModel) scheduleEmbeddings(accountId);
  return getModelEndpointView(accountId);
}

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
  const stored = await getStoredModelEndpoint(accountId);
  const apiKeySealed = v.apiKey ? sealSecret('model endpoint keys', v.apiKey) : v.clearKey ? null : (stored?.apiKeySealed ?? null);
  const client = await endpointClient({ baseUrl: v.baseUrl, apiKeySealed, embeddingModel: v.embeddingModel }, { timeoutMs: TEST_TIMEOUT_MS, maxRetries: 0 });
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
      const r = await client.embeddings.create({ model: v.embeddingModel, input: 'Test connection', encoding_format: 'float' });
      const n = r.data?.[0]?.embedding?.length ?? 0;
      checks.push(
        n > 0
          ? { name: 'Embeddings', ok: true, detail: `model ${v.embeddingModel} answered (${n} dimensions).` }
          : { name: 'Embeddings', ok: false, detail: `model ${v.embeddingModel}: the endpoint's answer had no embedding.` },
      );
    } catch (e) {
      checks.push({ name: 'Embeddings', ok: false, detail: `model ${v.embeddingModel}: ${describeFailure(e)}` });
    }
  }
  return { works: checks.every((c) => c.ok), checks };
}

/** What went wrong, in our words: the status and what it usually means, never the provider's text. */
export function describeFailure(e: unknown): string {
  if (e instanceof OpenAI.APIConnectionTimeoutError) return `no answer within ${TEST_TIMEOUT_MS / 1000} seconds.`;
  if (e instanceof OpenAI.APIConnectionError) return 'could not connect to the base URL.';
  if (e instanceof OpenAI.APIError) {
    const s = e.status;
    if (s === 401 || s === 403) return `the endpoint refused the key (HTTP ${s}).`;
    if (s === 404) return 'the endpoint answered HTTP 404: check the base URL (it often ends in /v1) and the model name.';
    if (s === 429) return 'the endpoint is limiting requests (HTTP 429); try again later.';
    if (s) return `the endpoint answered HTTP ${s}.`;
  }
  return "the endpoint's answer could not be read.";
}
