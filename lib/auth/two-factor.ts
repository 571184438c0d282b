import { recordAudit } from '../audit/service';
import { memberBy } from '../audit/contract';
import { createHash, randomBytes } from 'node:crypto';
import { generate, generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { getDb } from '../../db/client';
import { acceptTotpStep, countRecoveryCodes, disableTotp, enableTotp, getUserById, setPendingTotpSecret, useRecoveryCode } from '../../db/queries/team';
import { AppError } from '../core/errors';
import { sealSecret, openSecret } from '../core/secrets';
import { getEnv } from '../env';
import { getLimiter } from '../limits/limiter';
import { addressLimitKey } from '../net/client-address';
import { verifyPassword } from './passwords';

/**
 * Two-factor sign-in (docs/contracts.md §13): TOTP per RFC 6238 (SHA-1, 6 digits, 30 s) through otplib;
 * the secret is encrypted at rest (lib/core/secrets.ts); the last
 * accepted time step is stored, so a code is accepted once on every instance; 10 recovery codes,
 * stored as SHA-256 (they are random, so a fast hash is enough), each usable once.
 */
export const TOTP = { algorithm: 'sha1', digits: 6, period: 30 } as const;
/** One step either side: a phone clock 30 s off still works. */
const TOLERANCE_SECONDS = 30;
const RECOVERY_CODES = 10;

export const encryptSecret = (secret: string) => sealSecret('two-factor secrets', secret);
export const decryptSecret = (stored: string) => openSecret('two-factor secrets', stored);

/** The code of a secret at a time (tests and the authenticator's side). */
export function totpCode(secret: string, epochSeconds = Date.now() / 1000): Promise<string> {
  return generate({ secret, epoch: Math.floor(epochSeconds), ...TOTP });
}

/** The time step a code belongs to, or null when it is not valid now. */
export async function totpStep(secret: string, code: string, epochSeconds = Date.now() / 1000): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const epoch = Math.floor(epochSeconds);
  const r = await verify({ secret, token: code, epoch, epochTolerance: TOLERANCE_SECONDS, ...TOTP });
  return r.valid ? Math.floor(epoch / TOTP.period) + r.delta : null;
}

const hashRecoveryCode = (code: string) => createHash('sha256').update(normalizeRecoveryCode(code)).digest('hex');
const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[^0-9a-z]/g, '');

function newRecoveryCode(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/**
 * Starts setting up two-factor: a new secret (kept encrypted, not yet on), its URI and QR code. Asks
 * for the member's password, so a borrowed session cannot bind the account to someone else's phone;
 * wrong passwords count like wrong codes.
 */
export async function beginTwoFactorSetup(member: { userId: number; email: string }, password: unknown, ip: string) {
  const user = await getUserById(await getDb(), member.userId);
  if (!user) throw new AppError('not_found', 'No such user.');
  if (user.totpEnabledAt) throw new AppError('conflict', 'Two-factor authentication is already on.');
  try {
    await refuseIfThrottled(member.userId, ip);
  } catch (e) {
    if (e instanceof CodeThrottled) throw new AppError('rate_limited', e.message);
    throw e;
  }
  if (typeof password !== 'string' || password.length > 1024 || !(await verifyPassword(password, user.passwordHash))) {
    await recordCodeFailure(member.userId, ip);
    throw new AppError('invalid_request', 'The password is not right.');
  }
  const secret = generateSecret();
  await setPendingTotpSecret(await getDb(), member.userId, encryptSecret(secret));
  const uri = generateURI({ issuer: 'svc', label: member.email, secret, ...TOTP });
  return { secret, uri, qr: await QRCode.toDataURL(uri, { margin: 1, width: 220 }) };
}

/** Confirms the set-up with a code; returns the recovery codes (shown once). */
export async function confirmTwoFactorSetup(member: { userId: number }, code: unknown, ip: string) {
  const db = await getDb();
  const user = await getUserById(db, member.userId);
  if (!user?.totpSecret || user.totpEnabledAt) throw new AppError('conflict', 'Start setting up two-factor authentication first.');
  await refuseIfThrottled(member.userId, ip);
  const step = await totpStep(decryptSecret(user.totpSecret), String(code ?? '').trim());
  if (step === null) {
    await recordCodeFailure(member.userId, ip);
    throw new AppError('invalid_request', 'That code is not valid; enter the 6 digits your app shows now.');
  }
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  if (!(await db.transaction(async (tx) => enableTotp(tx as unknown as typeof db, member.userId, step, codes.map(hashRecoveryCode))))) {
    throw new AppError('conflict', 'Two-factor authentication is already on.');
  }
  return { recovery_codes: codes };
}

export async function turnOffTwoFactor(member: { userId: number }, code: unknown, ip: string) {
  if (!(await checkSecondFactor(member.userId, code, ip))) throw new AppError('invalid_request', 'That code is not valid or was already used.');
  await disableTotp(await getDb(), member.userId);
  return { two_factor: false };
}

export async function recoveryCodesLeft(userId: number): Promise<number> {
  return countRecoveryCodes(await getDb(), userId);
}

function limiters() {
  const env = getEnv();
  return {
    user: getLimiter('signin:code-user', { points: env.SIGNIN_FAILURES_PER_EMAIL_AND_IP, durationSeconds: 15 * 60 }),
    address: getLimiter('signin:address', { points: env.SIGNIN_FAILURES_PER_IP, durationSeconds: 15 * 60 }),
  };
}

export class CodeThrottled extends Error {}

async function refuseIfThrottled(userId: number, ip: string) {
  const l = limiters();
  const left = await Promise.all([l.user.peek(`u${userId}`), l.address.peek(addressLimitKey(ip))]);
  if (left.some((n) => n !== null && n <= 0)) throw new CodeThrottled('Too many wrong codes; wait 15 minutes and try again.');
}

async function recordCodeFailure(userId: number, ip: string) {
  const l = limiters();
  await Promise.all([l.user.consume(`u${userId}`), l.address.consume(addressLimitKey(ip))]);
}

/**
 * The second step of signing in: a current TOTP code (each time step accepted once) or an unused
 * recovery code. Failures count like wrong passwords; throws CodeThrottled when refused.
 */
export async function checkSecondFactor(userId: number, code: unknown, ip: string): Promise<boolean> {
  await refuseIfThrottled(userId, ip);
  const db = await getDb();
  const user = await getUserById(db, userId);
  const given = typeof code === 'string' ? code.trim().slice(0, 64) : '';
  let ok = false;
  if (user?.totpSecret && user.totpEnabledAt && given) {
    if (/^\d{6}$/.test(given)) {
      const step = await totpStep(decryptSecret(user.totpSecret), given);
      ok = step !== null && (await acceptTotpStep(db, userId, step));
    } else {
      ok = await useRecoveryCode(db, userId, hashRecoveryCode(given));
    }
  }
  if (!ok) {
    await recordCodeFailure(userId, ip);
    if (user) await recordAudit(db, user.accountId, memberBy(user.email, ip), 'member.sign_in_failed', `${user.email} (authentication code)`);
  } else await limiters().user.reset(`u${userId}`);
  return ok;
}
