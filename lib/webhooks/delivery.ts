import { Webhook } from 'standardwebhooks';
import { getEnv } from '../env';
import { type CheckedAddress, requestChecked, resolveOutboundUrl, UnsafeAddressError } from '../net/address';
import { MAX_ERROR_CHARS, MAX_RESPONSE_BYTES } from './rules';

/**
 * One delivery attempt (docs/contracts.md §11): a POST of the stored body, signed per Standard Webhooks
 * with the current secret (and the previous one during a rotation's overlap: several
 * space-separated signatures in `webhook-signature`). The address is checked after resolution
 * and the connection goes to that checked address; redirects are not followed (a 3xx is a failure).
 */
export type AttemptResult = { ok: boolean; statusCode: number | null; latencyMs: number; error: string | null };

export function signatureHeaders(eventId: string, body: string, secrets: string[], at = new Date()): Record<string, string> {
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(eventId, at, body)).join(' '),
  };
}

const clip = (s: string) => (s.length > MAX_ERROR_CHARS ? `${s.slice(0, MAX_ERROR_CHARS - 1)}…` : s);

export async function attemptDelivery(urlText: string, eventId: string, body: string, secrets: string[], signal?: AbortSignal): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let address: CheckedAddress;
  let url: URL;
  try {
    ({ url, address } = await resolveOutboundUrl(urlText));
  } catch (e) {
    const why = e instanceof UnsafeAddressError ? `refused: ${e.message}` : `could not resolve: ${(e as Error).message}`;
    return { ok: false, statusCode: null, latencyMs: elapsed(), error: clip(why) };
  }
  const bytes = Buffer.from(body, 'utf8');
  const timeoutMs = getEnv().WEBHOOK_TIMEOUT_MS;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (r: AttemptResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(r);
      }
    };
    // Connects to the address just checked, whatever a second DNS answer would say.
    const req = requestChecked(
      url,
      address,
      {
        method: 'POST',
        headers: {
          ...signatureHeaders(eventId, body, secrets),
          'content-type': 'application/json',
          'content-length': String(bytes.length),
          'user-agent': 'svc-webhooks/1',
        },
      },
      (res) => {
        let seen = 0;
        res.on('data', (c: Buffer) => {
          seen += c.length;
          if (seen > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () => {
          const code = res.statusCode ?? 0;
          const ok = code >= 200 && code < 300;
          finish({
            ok,
            statusCode: code,
            latencyMs: elapsed(),
            error: ok ? null : `HTTP ${code}${code >= 300 && code < 400 ? ' (redirects are not followed)' : ''}`,
          });
        };
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, statusCode: null, latencyMs: elapsed(), error: `no answer within ${timeoutMs} ms` });
      req.destroy();
    }, timeoutMs);
    const onAbort = () => {
      finish({ ok: false, statusCode: null, latencyMs: elapsed(), error: 'interrupted: the server is stopping' });
      req.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e: NodeJS.ErrnoException) =>
      finish({ ok: false, statusCode: null, latencyMs: elapsed(), error: clip(`connection failed: ${e.code ?? e.message}`) }),
    );
    req.end(bytes);
  });
}
