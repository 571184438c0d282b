import { z } from 'zod';
import { getDb } from '../../db/client';
import { channelBelongsTo, insertChannel } from '../../db/queries/channels';
import { getWidgetClientForAuth, insertWidgetClient, listWidgetClients, updateWidgetClient } from '../../db/queries/widget-clients';
import { requireAccount, validate } from '../accounts/service';
import { AppError } from '../api/errors';
import { RateLimiter } from '../api/rate-limit';
import { hashSecret, randomBase62, secretMatches } from '../auth/api-keys';
import { hostAllowed, originHost } from '../auth/domains';
import { publishInvalidation } from '../cache/invalidation';
import { signWidgetToken } from '../auth/widget-tokens';
import { getEnv } from '../env';
import { CreateWidgetClientInput, Domain, TokenRequest } from './contract';

export async function createWidgetClient(input: z.input<typeof CreateWidgetClientInput>) {
  const v = validate(CreateWidgetClientInput, input, { accountId: 'account', domains: 'domain', channelId: 'channel' });
  const db = await getDb();
  await requireAccount(db, v.accountId);
  let channelId = v.channelId;
  if (channelId !== undefined) {
    if (!(await channelBelongsTo(db, v.accountId, channelId))) throw new AppError('not_found', `No channel ${channelId} in account ${v.accountId}.`);
  } else {
    channelId = await insertChannel(db, v.accountId, 'Website widget');
  }
  const id = `wc_${randomBase62(16)}`;
  const secret = `wcs_${randomBase62(40)}`;
  const domains = [...new Set(v.domains)];
  await insertWidgetClient(db, v.accountId, { id, secretHash: hashSecret(secret), domains, channelId });
  return { client_id: id, client_secret: secret, domains, channel_id: channelId };
}

export async function listClients(accountId: number) {
  return listWidgetClients(await getDb(), accountId);
}

export async function setClientDomains(accountId: number, clientId: string, domains: string[]) {
  const v = validate(z.object({ domains: z.array(Domain).min(1, 'give at least one domain').max(100) }), { domains });
  const row = await updateWidgetClient(await getDb(), accountId, clientId, { domains: [...new Set(v.domains)] });
  if (!row) throw new AppError('not_found', `No widget client ${clientId}.`);
  await publishInvalidation('widget-client', clientId); // open sockets of a removed domain close at once, everywhere
  return row;
}

export async function rotateClientSecret(accountId: number, clientId: string) {
  const secret = `wcs_${randomBase62(40)}`;
  const row = await updateWidgetClient(await getDb(), accountId, clientId, { secretHash: hashSecret(secret) });
  if (!row) throw new AppError('not_found', `No widget client ${clientId}.`);
  return { client_id: row.id, client_secret: secret };
}

const LIMITS = Symbol.for('svc.tokenRateLimits');
function limiters(): { perClient: RateLimiter; perIp: RateLimiter } {
  const holder = globalThis as { [LIMITS]?: { perClient: RateLimiter; perIp: RateLimiter } };
  const env = getEnv();
  holder[LIMITS] ??= {
    perClient: new RateLimiter(env.TOKEN_RATE_PER_CLIENT_PER_MINUTE, 60_000),
    perIp: new RateLimiter(env.TOKEN_RATE_PER_IP_PER_MINUTE, 60_000),
  };
  return holder[LIMITS];
}

/**
 * POST /api/widget/token. With client_secret: the integrator's backend (no Origin check).
 * Without: the browser in client-id mode, allowed only from a registered domain (403 otherwise).
 */
export async function issueWidgetToken(body: unknown, origin: string | null, ip: string) {
  const req = validate(TokenRequest, body);
  limiters().perIp.enforce(ip, 'token requests from this address');
  limiters().perClient.enforce(req.client_id, 'token requests for this client');
  const client = await getWidgetClientForAuth(await getDb(), req.client_id);
  if (!client) throw new AppError('not_found', `No widget client ${req.client_id}.`);
  if (req.client_secret !== undefined) {
    if (!secretMatches(req.client_secret, client.secretHash)) throw new AppError('unauthorized', 'Wrong client secret.');
  } else if (!hostAllowed(originHost(origin), client.domains)) {
    throw new AppError('forbidden', origin
      ? `Origin ${origin} is not a registered domain of this widget client.`
      : 'Missing Origin header: client-id mode works only from a browser on a registered domain.');
  }
  const visitorId = req.visitor_id ?? `v_${randomBase62(22)}`;
  const { token, expiresIn } = await signWidgetToken({
    accountId: client.accountId, clientId: client.id, channelId: client.channelId, domains: client.domains, visitorId,
    visitorBound: req.visitor_id !== undefined,
  });
  return { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn, visitor_id: visitorId };
}

/** The client's domains now (null when the client is gone): edits apply to tokens already issued. */
export async function currentClientDomains(clientId: string): Promise<string[] | null> {
  const client = await getWidgetClientForAuth(await getDb(), clientId);
  return client ? client.domains : null;
}
