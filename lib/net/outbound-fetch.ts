import type { IncomingMessage } from 'node:http';
import { type CheckedAddress, requestChecked, resolveOutboundUrl } from './address';

/**
 * A `fetch` for HTTP clients (the OpenAI SDK) that call an account's endpoint: each request is
 * resolved and checked by the outbound address rule, then connects to that checked address
 * (lib/net/address.ts, the same pinning as webhooks and website imports). Redirects are refused,
 * not followed; the body stops with an error past `maxBytes` (streamed or not) and the whole
 * request, body included, past `timeoutMs` or when the caller's signal aborts.
 */
export type OutboundLimits = { maxBytes: number; timeoutMs: number; checkAddress: boolean };

/** A response that broke a limit or a rule (over the byte cap, a redirect, past the time cap). */
export class OutboundResponseError extends Error {}

const NULL_BODY = new Set([204, 205, 304]);

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body == null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('only string and byte request bodies are sent');
}

function responseHeaders(res: IncomingMessage): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (Array.isArray(v)) for (const x of v) h.append(k, x);
    else if (v !== undefined) h.set(k, v);
  }
  return h;
}

export function outboundFetch(limits: OutboundLimits): typeof fetch {
  return async (input, init = {}) => {
    const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let url: URL;
    let address: CheckedAddress | null = null;
    if (limits.checkAddress) ({ url, address } = await resolveOutboundUrl(raw));
    else url = new URL(raw);
    const deadline = AbortSignal.timeout(limits.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    signal.throwIfAborted();
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body = requestBody(init.body);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    // Uncompressed only: the byte cap then counts what is parsed (no decompression bomb).
    headers['accept-encoding'] = 'identity';
    const reason = () =>
      deadline.aborted ? new OutboundResponseError(`no complete answer within ${limits.timeoutMs} ms`) : (signal.reason ?? new Error('aborted'));
    return new Promise<Response>((resolve, reject) => {
      const req = requestChecked(url, address, { method: init.method ?? 'GET', headers, signal }, (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status > 599) {
          res.destroy();
          return reject(new OutboundResponseError(`the endpoint answered with HTTP ${status}`));
        }
        if (status >= 300 && status < 400) {
          res.destroy();
          return reject(new OutboundResponseError(`the endpoint answered with a redirect (HTTP ${status}); redirects are not followed`));
        }
        let seen = 0;
        let settled = false;
        let onAbort = () => {};
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            const fail = (e: Error) => {
              if (settled) return;
              settled = true;
              signal.removeEventListener('abort', onAbort);
              res.destroy();
              controller.error(e);
            };
            onAbort = () => fail(reason());
            signal.addEventListener('abort', onAbort, { once: true });
            res.on('data', (c: Buffer) => {
              if (settled) return;
              seen += c.length;
              if (seen > limits.maxBytes) return fail(new OutboundResponseError(`the answer is larger than ${limits.maxBytes} bytes`));
              controller.enqueue(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
              if ((controller.desiredSize ?? 1) <= 0) res.pause();
            });
            res.on('end', () => {
              if (settled) return;
              settled = true;
              signal.removeEventListener('abort', onAbort);
              controller.close();
            });
            res.on('error', (e) => fail(signal.aborted ? reason() : e));
            res.on('aborted', () => fail(new OutboundResponseError('the connection closed before the answer ended')));
          },
          pull() {
            res.resume();
          },
          cancel() {
            settled = true;
            signal.removeEventListener('abort', onAbort);
            res.destroy();
          },
        });
        resolve(new Response(NULL_BODY.has(status) ? null : stream, { status, statusText: res.statusMessage, headers: responseHeaders(res) }));
      });
      req.on('error', (e) => reject(signal.aborted ? reason() : e));
      req.end(body);
    });
  };
}
