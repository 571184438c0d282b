import { AppError } from '../core/errors';
import { requestChecked, resolveOutboundUrl, UnsafeAddressError } from '../net/address';

/** What a website import sends as its user agent (robots.txt groups match it). */
export const CRAWLER_AGENT = 'svc-kb-crawler';

export type FetchedPage = { status: number; contentType: string; location: string | null; body: Buffer; truncated: boolean };

/**
 * The outbound address rule of docs/contracts.md §16 for a website address: parsed, resolved and
 * every address checked (AppError 'invalid_request' with the refusal text when refused).
 */
export async function checkOutboundUrl(raw: string) {
  try {
    return await resolveOutboundUrl(raw.trim());
  } catch (e) {
    if (e instanceof UnsafeAddressError) throw new AppError('invalid_request', `Website or sitemap URL: ${e.message}.`);
    throw e;
  }
}

/**
 * One GET through the outbound address rule, connecting to the address just checked (a second DNS
 * answer cannot reach a refused one). Redirects are returned, not followed (the crawler checks
 * each). The body stops at `maxBytes` (truncated) and the whole request at `timeoutMs`.
 */
export async function fetchPage(raw: string, opts: { maxBytes: number; timeoutMs: number; signal?: AbortSignal }): Promise<FetchedPage> {
  const { url, address } = await checkOutboundUrl(raw);
  return new Promise<FetchedPage>((resolve, reject) => {
    const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]) : AbortSignal.timeout(opts.timeoutMs);
    const req = requestChecked(
      url,
      address,
      {
        method: 'GET',
        signal,
        headers: { 'user-agent': `${CRAWLER_AGENT}/1`, accept: 'text/html, application/xml, text/xml, text/plain;q=0.5' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let seen = 0;
        let truncated = false;
        const done = () => {
          const location = typeof res.headers.location === 'string' ? absoluteLocation(res.headers.location, url) : null;
          // An unreadable Location fails the page (thrown here it escaped the promise and hung the crawl).
          if (location === undefined) return reject(new Error('the redirect address (Location) could not be read'));
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? '').toLowerCase(),
            location,
            body: Buffer.concat(chunks),
            truncated,
          });
        };
        res.on('data', (c: Buffer) => {
          if (truncated) return;
          seen += c.length;
          if (seen > opts.maxBytes) {
            truncated = true;
            chunks.push(c.subarray(0, c.length - (seen - opts.maxBytes)));
            res.destroy();
            done();
          } else chunks.push(c);
        });
        res.on('end', done);
        res.on('error', (e) => (truncated ? done() : reject(e)));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        new Error(e.name === 'AbortError' || e.name === 'TimeoutError' ? `no answer within ${opts.timeoutMs} ms` : `connection failed: ${e.code ?? e.message}`),
      ),
    );
    req.end();
  });
}

/** A Location header resolved against the request's URL; undefined when it is no URL. */
function absoluteLocation(location: string, base: URL): string | undefined {
  try {
    return new URL(location, base).toString();
  } catch {
    return undefined;
  }
}
