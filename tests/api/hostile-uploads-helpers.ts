/**
 * Helpers of the hostile-input suites: a raw multipart upload over node:http that streams its
 * body (chunked, or with any Content-Length, true or not) with backpressure and stops sending as
 * soon as the server answers; an RSS sampler; and what an account's uploads occupy in the database.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import { getDb } from '../../db/client';
import { getUploadStorage } from '../../db/queries/uploads';

export const MiB = 1024 * 1024;

export type RawResult = { status: number; body: any; sentBytes: number; ms: number; headers: http.IncomingHttpHeaders };

/** `mib` MiB of `byte` (plus `extra` bytes) as 1 MiB pieces, generated as they are sent. */
export function* filler(totalBytes: number, byte = 0x61, piece = MiB): Generator<Buffer> {
  const block = Buffer.alloc(piece, byte);
  for (let left = totalBytes; left > 0; left -= piece) yield left >= piece ? block : block.subarray(0, left);
}

/**
 * POST /api/widget/uploads with a body streamed from `content`. `contentLength`: 'exact' sends
 * the true length, a number sends that (a lie), undefined sends none (chunked).
 */
export function rawUpload(
  baseUrl: string,
  token: string,
  content: Iterable<Buffer>,
  opts: {
    filename?: string;
    contentLength?: 'exact' | number;
    exactBytes?: number;
    headers?: Record<string, string>;
  } = {},
): Promise<RawResult> {
  const boundary = `----svc${Date.now().toString(36)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${opts.filename ?? 'big.txt'}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const headers: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'content-type': `multipart/form-data; boundary=${boundary}`,
    ...opts.headers,
  };
  if (opts.contentLength === 'exact') headers['content-length'] = String(head.length + (opts.exactBytes ?? 0) + tail.length);
  else if (typeof opts.contentLength === 'number') headers['content-length'] = String(opts.contentLength);
  const url = new URL('/api/widget/uploads', baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let answered = false;
    let sentBytes = 0;
    const req = http.request(url, { method: 'POST', headers, agent: false });
    req.on('response', (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        const ms = Date.now() - started;
        const text = Buffer.concat(parts).toString('utf8');
        let body: any = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body, sentBytes, ms, headers: res.headers });
      });
    });
    req.on('error', (e) => {
      if (!answered) reject(e);
    });
    (async () => {
      const write = async (b: Buffer) => {
        if (answered || req.destroyed) return;
        sentBytes += b.length;
        if (!req.write(b)) {
          await new Promise<void>((r) => {
            const done = () => {
              req.off('drain', done);
              req.off('close', done);
              r();
            };
            req.on('drain', done);
            req.on('close', done);
          });
        }
      };
      await write(head);
      for (const b of content) {
        if (answered || req.destroyed) break;
        await write(b);
      }
      await write(tail);
      if (!answered && !req.destroyed) req.end();
    })().catch(() => {});
  });
}

/** Samples this process's RSS every 25 ms while `fn` runs: the growth over the start, at its peak. */
export async function peakRssGrowth<T>(fn: () => Promise<T>): Promise<{ value: T; growthBytes: number }> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 25);
  try {
    const value = await fn();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, growthBytes: peak - base };
  } finally {
    clearInterval(timer);
  }
}

export async function uploadStorage(accountId: number) {
  return getUploadStorage(await getDb(), accountId);
}

/** SHA-256 of a streamed HTTP body, never holding it whole. */
export async function hashBody(res: Response): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

export function sha256Of(content: Iterable<Buffer>): string {
  const hash = createHash('sha256');
  for (const b of content) hash.update(b);
  return hash.digest('hex');
}

/** A dashboard session cookie for an admin, through next-auth's own sign-in endpoints. */
export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const jar = csrf.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar },
    body: new URLSearchParams({ csrfToken, email, password, json: 'true' }),
  });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .find((c) => /session-token=/.test(c));
  if (!session) throw new Error(`sign-in failed: ${res.status}`);
  return session;
}
