import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { nextAuthSecret } from '../env';

/**
 * Secrets kept at rest (two-factor seeds, accounts' model keys): AES-256-GCM under a key derived
 * from NEXTAUTH_SECRET and the secret's purpose, so one purpose's ciphertext never opens as another's.
 */
export type SecretPurpose = 'two-factor secrets' | 'model endpoint keys';

function keyFor(purpose: SecretPurpose): Buffer {
  return createHash('sha256')
    .update(`svc ${purpose}\0${nextAuthSecret() ?? ''}`)
    .digest();
}

export function sealSecret(purpose: SecretPurpose, secret: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', keyFor(purpose), iv);
  const body = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), c.getAuthTag().toString('base64url')].join('.');
}

/** The secret sealed by sealSecret; throws when the text was altered or sealed under another key. */
export function openSecret(purpose: SecretPurpose, stored: string): string {
  const [v, iv, body, tag] = stored.split('.');
  if (v !== 'v1' || !iv || !body || !tag) throw new Error(`unreadable sealed secret (${purpose})`);
  const d = createDecipheriv('aes-256-gcm', keyFor(purpose), Buffer.from(iv, 'base64url'));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(body, 'base64url')), d.final()]).toString('utf8');
}
