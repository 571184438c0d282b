// One database: PostgreSQL — refusals at the handshake, from the token and the Origin
/**
 * The /widget socket refuses every bad token and every foreign Origin at connect, on polling and
 * on websocket, with a connect_error whose message says why (docs/contracts.md §6).
 */
import assert from 'node:assert/strict';
import { createHmac, createSign, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { RefusalCode } from '../../lib/chat/protocol';
import { getDb } from '../../db/client';
import { listSigningKeys } from '../../db/queries/widget-clients';
import { createTestAccount } from '../helpers/builders';
import { startTestServer, type TestServer } from '../helpers/server';
import {
  backendToken,
  connectOutcome,
  connectVisitor,
  createTestWidgetClient,
  expectRefused,
  TRANSPORTS,
  widgetSocket,
  type SocketOptions,
} from '../helpers/widget';

let server: TestServer;
before(
  async () => {
    server = await startTestServer({ TOKEN_RATE_PER_IP_PER_MINUTE: '100000', TOKEN_RATE_PER_CLIENT_PER_MINUTE: '100000' });
  },
  { timeout: 120_000 },
);
after(
  async () => {
    await server?.close();
  },
  { timeout: 30_000 },
);

const ORIGIN = 'https://example.com';
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

function hmacJwt(header: object, payload: object, secret: string | Buffer, hash: 'sha256' | 'sha512' = 'sha256'): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
}

/** A real token for example.com, and the means to forge variants of it with the server's own key. */
async function tokenKit() {
  const acct = await createTestAccount();
  const client = await createTestWidgetClient(acct.accountId, ['example.com']);
  const issued = await backendToken(server.url, client);
  const [key] = await listSigningKeys(await getDb());
  assert.ok(key, 'the server created a signing key');
  const header = decodeProtectedHeader(issued.access_token) as Record<string, unknown>;
  assert.equal(header.kid, key.kid, 'the newest key signs');
  const claims = decodeJwt(issued.access_token) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  const forge = (
    over: Record<string, unknown> = {},
    opts: { header?: Record<string, unknown>; secret?: string; hash?: 'sha256' | 'sha512'; drop?: string[] } = {},
  ) => {
    const payload: Record<string, unknown> = { ...claims, iat: now, exp: now + 600, ...over };
    for (const k of opts.drop ?? []) delete payload[k];
    return hmacJwt({ ...header, ...opts.header }, payload, opts.secret ?? key.secret, opts.hash);
  };
  return { acct, client, issued, token: issued.access_token, claims, key, forge, now };
}

type Row = { name: string; opts: Omit<SocketOptions, 'transport'>; want: RegExp };

describe('widget socket: refused connections', () => {
  it('refuses every bad token and foreign Origin with a connect_error that says why, on both transports', async () => {
    const { token, claims, forge, now } = await tokenKit();
    const other = await createTestAccount('Other Co');
    const otherClient = await createTestWidgetClient(other.accountId, ['other.test']);
    const otherToken = (await backendToken(server.url, otherClient)).access_token;
    const [head, body, sig] = token.split('.') as [string, string, string];
    const tamperedPayload = `${head}.${b64({ ...claims, dom: ['example.com', 'evil.test'] })}.${sig}`;
    const flippedSig = `${head}.${body}.${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsInput = `${b64({ alg: 'RS256', typ: 'JWT' })}.${body}`;
    const rs256 = `${rsInput}.${createSign('RSA-SHA256').update(rsInput).sign(privateKey).toString('base64url')}`;
    const tok = (t: unknown): Omit<SocketOptions, 'transport'> => ({ auth: { token: t }, origin: ORIGIN });

    // Each refusal carries the code the widget branches on (lib/chat/protocol.ts RefusalCode) beside its message.
    const CODES: Array<[RegExp, RefusalCode]> = [
      [/^token missing/, 'token_missing'],
      [/^token invalid/, 'token_invalid'],
      [/^token expired/, 'token_expired'],
      [/^domain not allowed/, 'domain_not_allowed'],
      [/^client_key in the address/, 'client_key_in_address'],
    ];
    const codeOf = (message: string) => CODES.find(([re]) => re.test(message))?.[1] ?? `no code for ${message}`;
    const rows: Row[] = [
      // missing
      { name: 'no auth at all', opts: { origin: ORIGIN }, want: /missing/ },
      { name: 'auth without token', opts: { auth: {}, origin: ORIGIN }, want: /missing/ },
      { name: 'empty token', opts: tok(''), want: /missing/ },
      { name: 'null token', opts: tok(null), want: /missing/ },
      { name: 'token in the query string instead of auth', opts: { origin: ORIGIN, query: { token } }, want: /missing/ },
      // not a string
      { name: 'number token', opts: tok(12345), want: /missing|invalid/ },
      { name: 'object token', opts: tok({ token }), want: /missing|invalid/ },
      { name: 'array token', opts: tok([token]), want: /missing|invalid/ },
      { name: 'boolean token', opts: tok(true), want: /missing|invalid/ },
      // garbage
      { name: 'garbage', opts: tok('hello'), want: /invalid/ },
      { name: 'three dots of garbage', opts: tok('a.b.c'), want: /invalid/ },
      { name: '"Bearer " prefix', opts: tok(`Bearer ${token}`), want: /invalid/ },
      { name: 'two segments only', opts: tok(`${head}.${body}`), want: /invalid/ },
      { name: 'very long token', opts: tok(`${token}${'A'.repeat(5000)}`), want: /invalid/ },
      { name: 'the client secret instead of a token', opts: tok('wcs_0123456789abcdefghijklmnopqrstuvwxyzABCD'), want: /invalid/ },
      // expired
      { name: 'expired', opts: tok(forge({ iat: now - 7200, exp: now - 3600 })), want: /expired/ },
      { name: 'expired a second ago', opts: tok(forge({ iat: now - 100, exp: now - 1 })), want: /expired/ },
      // signature and header
      { name: 'tampered payload (domain added)', opts: tok(tamperedPayload), want: /invalid/ },
      { name: 'tampered signature', opts: tok(flippedSig), want: /invalid/ },
      { name: 'signature removed', opts: tok(`${head}.${body}.`), want: /invalid/ },
      { name: 'alg none', opts: tok(`${b64({ alg: 'none', typ: 'JWT' })}.${body}.`), want: /invalid/ },
      { name: 'alg none with the real kid', opts: tok(`${b64({ ...decodeProtectedHeader(token), alg: 'none' })}.${body}.`), want: /invalid/ },
      { name: 'HS512 with the real key', opts: tok(forge({}, { header: { alg: 'HS512' }, hash: 'sha512' })), want: /invalid/ },
      { name: 'RS256 header', opts: tok(rs256), want: /invalid/ },
      { name: 'wrong kid', opts: tok(forge({}, { header: { kid: 'k-unknown' } })), want: /invalid/ },
      { name: 'no kid', opts: tok(forge({}, { header: { kid: undefined } })), want: /invalid/ },
      { name: 'right kid, other secret', opts: tok(forge({}, { secret: 'x'.repeat(43) })), want: /invalid/ },
      // claims
      { name: 'wrong audience', opts: tok(forge({ aud: 'svc-dashboard' })), want: /invalid/ },
      { name: 'no audience', opts: tok(forge({}, { drop: ['aud'] })), want: /invalid/ },
      { name: 'wrong issuer', opts: tok(forge({ iss: 'someone-else' })), want: /invalid/ },
      { name: 'wrong typ claim', opts: tok(forge({ typ: 'refresh' })), want: /invalid/ },
      { name: 'no typ claim', opts: tok(forge({}, { drop: ['typ'] })), want: /invalid/ },
      { name: 'no sub', opts: tok(forge({}, { drop: ['sub'] })), want: /invalid/ },
      { name: 'no exp', opts: tok(forge({}, { drop: ['exp'] })), want: /invalid/ },
      { name: 'exp not a number', opts: tok(forge({ exp: String(now + 600) })), want: /invalid/ },
      { name: 'not valid before a future nbf', opts: tok(forge({ nbf: now + 3600 })), want: /invalid/ },
      { name: 'account claim not an integer', opts: tok(forge({ acc: String(claims.acc) })), want: /invalid/ },
      { name: 'domains claim not an array', opts: tok(forge({ dom: 'example.com' })), want: /invalid/ },
      // Origin
      { name: 'no Origin', opts: { auth: { token }, origin: null }, want: /domain not allowed/ },
      { name: 'Origin "null"', opts: { auth: { token }, origin: 'null' }, want: /domain not allowed/ },
      { name: 'look-alike suffix', opts: { auth: { token }, origin: 'https://example.com.evil.test' }, want: /domain not allowed/ },
      { name: 'look-alike prefix', opts: { auth: { token }, origin: 'https://evil-example.com' }, want: /domain not allowed/ },
      { name: 'subdomain of an apex-only client', opts: { auth: { token }, origin: 'https://www.example.com' }, want: /domain not allowed/ },
      { name: 'other scheme', opts: { auth: { token }, origin: 'ftp://example.com' }, want: /domain not allowed/ },
      { name: 'localhost not registered', opts: { auth: { token }, origin: 'http://localhost:3000' }, want: /domain not allowed/ },
      { name: "another account's valid token on this domain", opts: { auth: { token: otherToken }, origin: ORIGIN }, want: /domain not allowed/ },
      { name: "a valid token on the other account's domain", opts: { auth: { token }, origin: 'https://other.test' }, want: /domain not allowed/ },
      // client_key in the address
      { name: 'client_key in the address, with a valid token', opts: { auth: { token }, origin: ORIGIN, query: { client_key: 'abc' } }, want: /client_key/ },
      { name: 'clientKey in the address', opts: { auth: { token }, origin: ORIGIN, query: { clientKey: 'abc' } }, want: /client_key/ },
      { name: 'client_key in the address, no token', opts: { origin: ORIGIN, query: { client_key: token } }, want: /client_key|missing/ },
      { name: 'empty client_key in the address', opts: { auth: { token }, origin: ORIGIN, query: { client_key: '' } }, want: /client_key/ },
    ];
    assert.ok(rows.length >= 25);
    const failures: string[] = [];
    for (const transport of TRANSPORTS) {
      await Promise.all(
        rows.map(async (row) => {
          const socket = widgetSocket(server.url, { ...row.opts, transport });
          const outcome = await connectOutcome(socket);
          socket.close();
          if (outcome.connected) failures.push(`${transport} / ${row.name}: accepted`);
          else if (!row.want.test(outcome.message))
            failures.push(`${transport} / ${row.name}: message ${JSON.stringify(outcome.message)} does not match ${row.want}`);
          else if (outcome.code !== codeOf(outcome.message))
            failures.push(`${transport} / ${row.name}: code ${outcome.code} for ${JSON.stringify(outcome.message)}`);
        }),
      );
    }
    assert.deepEqual(failures, []);
  });

  it('accepts the same token from the registered origin on both transports (the control)', async () => {
    const { token, issued } = await tokenKit();
    for (const transport of TRANSPORTS) {
      for (const origin of [ORIGIN, 'http://example.com:8080', 'https://EXAMPLE.COM']) {
        const v = await connectVisitor(server.url, token, origin, transport);
        assert.equal(v.session!.visitor_id, issued.visitor_id);
        assert.equal(v.session!.protocol, 1);
        assert.equal(v.session!.token_expires_at, decodeJwt(token).exp);
        assert.equal(typeof v.session!.limits.upload_max_bytes, 'number');
        v.close();
      }
    }
  });

  it('matches wildcard domains on subdomains at any depth, never the apex', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['*.example.com']);
    const { access_token: token } = await backendToken(server.url, client);
    for (const transport of TRANSPORTS) {
      for (const origin of ['https://a.example.com', 'https://a.b.example.com', 'http://shop.example.com:3000']) {
        (await connectVisitor(server.url, token, origin, transport)).close();
      }
      for (const origin of ['https://example.com', 'https://aexample.com', 'https://a.example.com.evil.test']) {
        assert.match(await expectRefused(server.url, { transport, auth: { token }, origin }), /domain not allowed/, origin);
      }
    }
  });

  it('follows the domains registered when the token was issued: localhost only when registered', async () => {
    const acct = await createTestAccount();
    const client = await createTestWidgetClient(acct.accountId, ['localhost']);
    const { access_token: token } = await backendToken(server.url, client);
    (await connectVisitor(server.url, token, 'http://localhost:5173', 'polling')).close();
    assert.match(await expectRefused(server.url, { auth: { token }, origin: 'http://127.0.0.1:5173' }), /domain not allowed/);
  });
});
