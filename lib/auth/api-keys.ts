import { hash, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `svc_<env>_<key_id>_<secret>` (docs/contracts.md §5). The key id is public and
 * indexes the row; only SHA-256 of the 190-bit random secret is stored (a slow hash adds nothing
 * for secrets of that entropy and would cost every request).
 */
export type KeyEnv = 'live' | 'test';
export type ParsedKey = { env: KeyEnv; keyId: string; secret: string };

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_ID_LENGTH = 16;
export const SECRET_LENGTH = 32;
const KEY_RE = /^svc_(live|test)_([0-9A-Za-z]{12,64})_([0-9A-Za-z]{32,128})$/;

export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

export function generateApiKey(env: KeyEnv): { key: string; keyId: string; secretHash: Buffer } {
  const keyId = randomBase62(KEY_ID_LENGTH);
  const secret = randomBase62(SECRET_LENGTH);
  return { key: `svc_${env}_${keyId}_${secret}`, keyId, secretHash: hashSecret(secret) };
}

export function parseApiKey(key: string): ParsedKey | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  return { env: m[1] as KeyEnv, keyId: m[2]!, secret: m[3]! };
}

export function hashSecret(secret: string): Buffer {
  // The one-shot form: no Hash object per call (checked on every Customer API request).
  return hash('sha256', secret, 'buffer');
}

export function secretMatches(secret: string, storedHash: Uint8Array): boolean {
  const actual = hashSecret(secret);
  return actual.length === storedHash.length && timingSafeEqual(actual, storedHash);
}

/** Reads `Authorization: Bearer <token>`; null when absent, '' when present but not Bearer. */
export function bearerToken(header: string | null): string | null {
  if (header === null) return null;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header.trim());
  return m ? m[1]! : '';
}
