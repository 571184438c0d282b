import { randomBytes } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, decodeProtectedHeader } from 'jose';
import { getDb } from '../../db/client';
import { insertSigningKey, listSigningKeys } from '../../db/queries/widget-clients';
import { AppError } from '../core/errors';
import { getEnv } from '../env';
import { processSlot } from '../core/process';

/**
 * Widget access tokens: HS256 JWTs (algorithm pinned) with issuer, audience, type, account,
 * client, channel, allowed domains, visitor, iat and exp. Keys have ids (`kid`) so they can rotate:
 * the newest key signs, every unretired key verifies. Keys come from WIDGET_SIGNING_KEYS or, by
 * default, from the database (generated on first use), so every process of a deployment agrees.
 */
export const TOKEN_ISSUER = 'svc';
export const TOKEN_AUDIENCE = 'svc-widget';
export const TOKEN_TYPE = 'widget_access';
const ALG = 'HS256';

export type WidgetClaims = {
  accountId: number;
  clientId: string;
  channelId: number;
  domains: string[];
  visitorId: string;
  exp: number;
  iat: number;
  /** True when the issuer named the visitor (token request with visitor_id): the browser may not override it. */
  visitorBound: boolean;
};

export const VISITOR_ID_RE = /^v_[0-9A-Za-z_-]{16,64}$/;

/**
 * The visitor a request acts as. A token issued for a named visitor binds it; otherwise the
 * browser's own long-lived visitor id (sent beside the token) keeps its conversations across
 * token renewals, and without one the token's random subject is used.
 */
export function withVisitor(claims: WidgetClaims, browserVisitor: unknown): WidgetClaims {
  if (claims.visitorBound || typeof browserVisitor !== 'string' || !VISITOR_ID_RE.test(browserVisitor)) return claims;
  return { ...claims, visitorId: browserVisitor };
}

type Key = { kid: string; secret: Uint8Array };
const keysSlot = processSlot<Promise<Key[]>>('svc.widgetSigningKeys');

async function loadKeys(): Promise<Key[]> {
  const env = getEnv();
  if (env.WIDGET_SIGNING_KEYS) {
    let parsed: Array<{ kid: string; secret: string }>;
    try {
      parsed = JSON.parse(env.WIDGET_SIGNING_KEYS);
    } catch {
      throw new Error('WIDGET_SIGNING_KEYS must be JSON');
    }
    if (!Array.isArray(parsed) || parsed.length === 0 || parsed.some((k) => !k?.kid || typeof k.secret !== 'string' || k.secret.length < 32)) {
      throw new Error('WIDGET_SIGNING_KEYS must be [{"kid":"…","secret":"≥32 characters"}, …]');
    }
    return parsed.map((k) => ({ kid: k.kid, secret: new TextEncoder().encode(k.secret) }));
  }
  const db = await getDb();
  let rows = await listSigningKeys(db);
  if (rows.length === 0) {
    await insertSigningKey(db, `k${Date.now().toString(36)}`, randomBytes(32).toString('base64url'));
    rows = await listSigningKeys(db);
  }
  return rows.map((r) => ({ kid: r.kid, secret: new TextEncoder().encode(r.secret) }));
}

function signingKeys(): Promise<Key[]> {
  let keys = keysSlot.get();
  if (!keys)
    keysSlot.set(
      (keys = loadKeys().catch((e) => {
        keysSlot.clear();
        throw e;
      })),
    );
  return keys;
}

export async function signWidgetToken(c: Omit<WidgetClaims, 'exp' | 'iat'>, ttlSeconds = getEnv().WIDGET_TOKEN_TTL_SECONDS) {
  const [key] = await signingKeys();
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    typ: TOKEN_TYPE,
    acc: c.accountId,
    cid: c.clientId,
    ch: c.channelId,
    dom: c.domains,
    ...(c.visitorBound ? { vb: true } : {}),
  })
    .setProtectedHeader({ alg: ALG, kid: key!.kid, typ: 'JWT' })
    .setIssuer(TOKEN_ISSUER)
    .setAudience(TOKEN_AUDIENCE)
    .setSubject(c.visitorId)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(key!.secret);
  return { token, expiresIn: ttlSeconds };
}

/**
 * Why a token was refused: the code reaches the widget as connect_error's `data.code`, the text as
 * its message. `clientId` is set only when the signature verified (an expired token, a failed claim
 * check): only then may the refusal be counted against that client.
 */
export type TokenRefusalCode = 'token_missing' | 'token_invalid' | 'token_expired';
export class TokenRefused extends Error {
  constructor(
    readonly code: TokenRefusalCode,
    message: string,
    readonly clientId: string | null = null,
  ) {
    super(message);
  }
}

const signedClientId = (payload: Record<string, unknown>) => (typeof payload.cid === 'string' ? payload.cid : null);

export async function verifyWidgetToken(token: unknown): Promise<WidgetClaims> {
  if (typeof token !== 'string' || token.length === 0) throw new TokenRefused('token_missing', 'token missing: pass it as auth.token');
  if (token.length > 4096) throw new TokenRefused('token_invalid', 'token invalid: too long');
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== ALG) throw new TokenRefused('token_invalid', `token invalid: algorithm ${String(header.alg)} is not accepted`);
    kid = header.kid;
  } catch (e) {
    if (e instanceof TokenRefused) throw e;
    throw new TokenRefused('token_invalid', 'token invalid: not a JWT');
  }
  const key = (await signingKeys()).find((k) => k.kid === kid);
  if (!key) throw new TokenRefused('token_invalid', 'token invalid: unknown signing key');
  try {
    const { payload } = await jwtVerify(token, key.secret, {
      algorithms: [ALG],
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      requiredClaims: ['exp', 'iat', 'sub'],
    });
    const p = payload as Record<string, unknown>;
    if (p.typ !== TOKEN_TYPE) throw new TokenRefused('token_invalid', 'token invalid: wrong token type', signedClientId(p));
    if (
      !Number.isInteger(p.acc) ||
      typeof p.cid !== 'string' ||
      !Number.isInteger(p.ch) ||
      !Array.isArray(p.dom) ||
      !p.dom.every((d) => typeof d === 'string') ||
      typeof p.sub !== 'string'
    ) {
      throw new TokenRefused('token_invalid', 'token invalid: malformed claims', signedClientId(p));
    }
    return {
      accountId: p.acc as number,
      clientId: p.cid,
      channelId: p.ch as number,
      domains: p.dom as string[],
      visitorId: p.sub,
      exp: payload.exp!,
      iat: payload.iat!,
      visitorBound: p.vb === true,
    };
  } catch (e) {
    if (e instanceof TokenRefused) throw e;
    if (e instanceof joseErrors.JWTExpired) throw new TokenRefused('token_expired', 'token expired: request a new one', signedClientId(e.payload));
    if (e instanceof joseErrors.JWTClaimValidationFailed)
      throw new TokenRefused('token_invalid', `token invalid: ${e.claim} claim check failed`, signedClientId(e.payload));
    if (e instanceof joseErrors.JWSSignatureVerificationFailed) throw new TokenRefused('token_invalid', 'token invalid: bad signature');
    throw new TokenRefused('token_invalid', 'token invalid');
  }
}

export function tokenRefusedAsHttp(e: unknown): never {
  if (e instanceof TokenRefused) throw new AppError('unauthorized', e.message);
  throw e;
}
