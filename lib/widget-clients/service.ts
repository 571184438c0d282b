import { z } from 'zod';
import { getDb } from '../../db/client';
import { releasedVersions } from '../widget-releases/service';
import { channelBelongsTo, insertChannel } from '../../db/queries/channels';
import { deleteWidgetClientRow, getWidgetClientForAuth, insertWidgetClient, listWidgetClients, updateWidgetClient } from '../../db/queries/widget-clients';
import { requireAccount, validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { hashSecret, randomBase62, secretMatches } from '../auth/api-keys';
import { hostAllowed, originHost } from '../auth/domains';
import { publishInvalidation } from '../cache/invalidation';
import { signWidgetToken } from '../auth/widget-tokens';
import { chargeTokenAddress, chargeTokenClient } from '../limits/widget-token';
import { noteRefusal } from './refusals';
import { ClientName, CreateWidgetClientInput, Domain, TokenRequest } from './contract';
import { APPEARANCE_LABELS, Appearance, storedAppearance } from './appearance';

export async function createWidgetClient(input: z.input<typeof CreateWidgetClientInput>) {
  const v = validate(CreateWidgetClientInput, input, { accountId: 'account', domains: 'domain', channelId: 'channel', name: 'name' });
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
  const name = v.name ?? domains[0]!;
  await insertWidgetClient(db, v.accountId, { id, name, secretHash: hashSecret(secret), domains, channelId });
  return { client_id: id, name, client_secret: secret, domains, channel_id: channelId };
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

export async function renameClient(accountId: number, clientId: string, name: string) {
  const v = validate(z.object({ name: ClientName }), { name });
  const row = await updateWidgetClient(await getDb(), accountId, clientId, { name: v.name });
  if (!row) throw new AppError('not_found', `No widget client ${clientId}.`);
  return row;
}

/** Saves a client's appearance (every field validated; a blank field is unset). */
export async function setClientAppearance(accountId: number, clientId: string, input: unknown) {
  const appearance = validate(Appearance, input, APPEARANCE_LABELS);
  const row = await updateWidgetClient(await getDb(), accountId, clientId, { appearance });
  if (!row) throw new AppError('not_found', `No widget client ${clientId}.`);
  return storedAppearance(row.appearance);
}

/** The appearance a widget of this public client id applies at load (GET /api/widget/config). */
export async function appearanceOfClient(clientId: string): Promise<Appearance> {
  const v = validate(TokenRequest.pick({ client_id: true }), { client_id: clientId });
  const client = await getWidgetClientForAuth(await getDb(), v.client_id);
  if (!client) throw new AppError('not_found', `No widget client ${v.client_id}.`);
  return storedAppearance(client.appearance);
}

/** Deletes a client of this account; its open sockets are disconnected at once, on every instance. */
export async function deleteWidgetClient({ accountId, clientId }: { accountId: number; clientId: string }) {
  const deleted = await deleteWidgetClientRow(await getDb(), accountId, clientId);
  if (!deleted) throw new AppError('not_found', `No widget client ${clientId}.`);
  await publishInvalidation('widget-client', clientId); // revokeSockets finds no client and disconnects them
  return { client_id: clientId, deleted: true as const };
}

/** The operator's CLI door: the client id names its account, so no --account is needed. */
export async function deleteWidgetClientById(clientId: string) {
  const client = await getWidgetClientForAuth(await getDb(), clientId);
  if (!client) throw new AppError('not_found', `No widget client ${clientId}.`);
  return deleteWidgetClient({ accountId: client.accountId, clientId });
}

export async function rotateClientSecret(accountId: number, clientId: string) {
  const secret = `wcs_${randomBase62(40)}`;
  const row = await updateWidgetClient(await getDb(), accountId, clientId, { secretHash: hashSecret(secret) });
  if (!row) throw new AppError('not_found', `No widget client ${clientId}.`);
  return { client_id: row.id, client_secret: secret };
}

/** The secret (backend mode) or the Origin (client-id mode); a refusal is recorded for the /widget page. */
function checkTokenRequester(client: { id: string; secretHash: Uint8Array; domains: string[] }, secret: string | undefined, origin: string | null, ip: string) {
  let refusal: AppError | null = null;
  if (secret !== undefined) {
    if (!secretMatches(secret, client.secretHash)) refusal = new AppError('unauthorized', 'Wrong client secret.');
  } else if (!hostAllowed(originHost(origin), client.domains)) {
    refusal = new AppError(
      'forbidden',
      origin
        ? `Origin ${origin} is not a registered domain of this widget client.`
        : 'Missing Origin header: client-id mode works only from a browser on a registered domain.',
    );
  }
  if (!refusal) return;
  const reason = secret !== undefined ? 'wrong client secret' : origin ? 'domain not allowed' : 'no Origin header';
  void noteRefusal({ clientId: client.id, verified: false, domains: client.domains, address: ip, origin, stage: 'token', reason, detail: refusal.message });
  throw refusal;
}

/**
 * POST /api/widget/token. With client_secret: the integrator's backend (no Origin check).
 * Without: the browser in client-id mode, allowed only from a registered domain (403 otherwise).
 */
export async function issueWidgetToken(body: unknown, origin: string | null, ip: string) {
  const req = validate(TokenRequest, body);
  const refundAddress = await chargeTokenAddress(ip);
  const client = await getWidgetClientForAuth(await getDb(), req.client_id);
  if (!client) throw new AppError('not_found', `No widget client ${req.client_id}.`);
  checkTokenRequester(client, req.client_secret, origin, ip);
  // the integrator's backend: one address serves all its visitors
  if (req.client_secret !== undefined) await refundAddress();
  await chargeTokenClient(client.id, req.visitor_id);
  const visitorId = req.visitor_id ?? `v_${randomBase62(22)}`;
  const { token, expiresIn } = await signWidgetToken({
    accountId: client.accountId,
    clientId: client.id,
    channelId: client.channelId,
    domains: client.domains,
    visitorId,
    visitorBound: req.visitor_id !== undefined,
  });
  return { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn, visitor_id: visitorId };
}

/** The client's domains now (null when the client is gone): edits apply to tokens already issued. */
export async function currentClientDomains(clientId: string): Promise<string[] | null> {
  const client = await getWidgetClientForAuth(await getDb(), clientId);
  return client ? client.domains : null;
}

/** What a snippet may pin: each minor line (`2.0` = its newest patch), then every exact release. */
export function embedVersions(): string[] {
  const exact = releasedVersions();
  const minors = [...new Set(exact.map((v) => v.split('.').slice(0, 2).join('.')))];
  return [...minors, ...exact];
}
