import { randomBytes } from 'node:crypto';
import { getEnv } from '../env';

/** svc's inbound addresses (docs/contracts.md §17): `<local>[+<tag>]@INBOUND_MAIL_DOMAIN`, parts of random base-32 characters. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** 16 random base-32 characters (80 bits: unguessable). */
export function freshLocal(): string {
  const bytes = randomBytes(16);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

export const addressOf = (local: string, tag?: string) => `${local}${tag ? `+${tag}` : ''}@${getEnv().INBOUND_MAIL_DOMAIN}`;

/** A fresh tag for a conversation's Reply-To (10 base-32 characters). */
export const freshTag = () => freshLocal().slice(0, 10);
