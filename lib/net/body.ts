import { AppError } from '../core/errors';

/** Small JSON bodies (token requests, sign-in): 16 KiB is ~100× the largest real one. */
export const SMALL_BODY_BYTES = 16 * 1024;

function tooLarge(maxBytes: number): AppError {
  return new AppError('payload_too_large', `The request body is larger than ${maxBytes} bytes.`, { headers: { Connection: 'close' } });
}

/**
 * Reads a request body, refusing it WHILE it streams: a declared Content-Length over the cap is
 * refused before a byte is read, and an undeclared (chunked) body is cut off at cap + 1 bytes, so
 * an endless body costs at most `maxBytes` of memory.
 */
export async function readBodyCapped(req: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = req.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    await req.body?.cancel().catch(() => {});
    throw tooLarge(maxBytes);
  }
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** A JSON body of at most `maxBytes`, parsed; 413 over the cap, 400 when it is not JSON. */
export async function readJsonCapped(req: Request, maxBytes = SMALL_BODY_BYTES): Promise<unknown> {
  const bytes = await readBodyCapped(req, maxBytes);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AppError('invalid_request', 'The request body must be a JSON object.');
  }
}
