import OpenAI from 'openai';
import type { StoredModelEndpoint } from '../bot/settings';
import { AppError } from '../core/errors';
import { openSecret } from '../core/secrets';
import { parseOutboundUrl, resolveOutboundTarget, UnsafeAddressError } from '../net/address';

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

/** A client for the account's endpoint, its address checked now (a DNS answer may change after saving). */
export async function endpointClient(endpoint: StoredModelEndpoint, opts: { timeoutMs: number; maxRetries: number }): Promise<OpenAI> {
  await checkEndpointAddress(endpoint.baseUrl);
  const apiKey = endpoint.apiKeySealed ? openSecret('model endpoint keys', endpoint.apiKeySealed) : 'unused';
  return new OpenAI({ baseURL: endpoint.baseUrl, apiKey, maxRetries: opts.maxRetries, timeout: opts.timeoutMs });
}
