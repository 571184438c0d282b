import { z } from 'zod';
import { getDb, type Db } from '../../db/client';
import { recordAudit, withAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';
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

export async function createWidgetClient(by: AuditBy, input: z.input<typeof CreateWidgetClientInput>) {
  const v = validate(CreateWidgetClientInput, input, { accountId: 'account', domains: 'domain', channelId: 'channel', name: 'name' });
  const db = await getDb();
  await requireAccount(db, v.accountId);
  const id = `wc_${randomBase62(16)}`;
  const secret = `wcs_${randomBase62(40)}`;
  const domains = [...new Set(v.domains)];
  const name = v.name ?? domains[0]!;
  const channelId = await db.transaction(async (t) => {
    const tx = t as unknown as Db;
    let channel = v.channelId;
    if (channel !== undefined) {
      if (!(await channelBelongsTo(tx, v.accountId, channel))) throw new AppError('not_found', `No channel ${channel} in account ${v.accountId}.`);
    } else {
      channel = await insertChannel(tx, v.accountId, 'Website widget');
    }
    await insertWidgetClient(tx, v.accountId, { id, name, secretHash: hashSecret(secret), domains, channelId: channel });
    await recordAudit(tx, v.accountId, by, 'widget_client.created', `${id} (${name})`);
    return channel;
  });
  return { client_id: id, name, client_secret: secret, domains, channel_id: channelId };
}

/** An edit of one client and its audit entry ("<id>: <what>"), in one transaction; the 404 when the client is not this account's. */
async function editClient<T>(by: AuditBy, accountId: number, clientId: string, what: string, change: (tx: Db) => Promise<T | null>): Promise<T> {
  const row = await withAudit(accountId, by, 'widget_client.updated', change, (r) => (r ? `${clientId}: ${what}` : null));
  if (!row) throw new AppError('not_found', `No widget client ${clientId}.`);
  return row;
}

export async function listClients(accountId: number) {
  return listWidgetClients(await getDb(), accountId);
}

export async function setClientDomains(by: AuditBy, accountId: number, clientId: string, domains: string[]) {
  const v = validate(z.object({ domains: z.array(Domain).min(1, 'give at least one domain').max(100) }), { domains });
  const unique = [...new Set(v.domains)];
  const row = await editClient(by, accountId, clientId, `domains ${unique.join(', ')}`, (tx) =>
    updateWidgetClient(tx, accountId, clientId, { domains: unique }),
  );
  await publishInvalidation('widget-client', clientId); // open sockets of a removed domain close at once, everywhere
  return row;
}

export async function renameClient(by: AuditBy, accountId: number, clientId: string, name: string) {
  const v = validate(z.object({ name: ClientName }), { name });
  return editClient(by, accountId, clientId, `renamed to ${v.name}`, (tx) => updateWidgetClient(tx, accountId, clientId, { name: v.name }));
}

/** Saves a client's appearance (every field validated; a blank field is unset). */
export async function setClientAppearance(by: AuditBy, accountId: number, clientId: string, input: unknown) {
  const appearance = validate(Appearance, input, APPEARANCE_LABELS);
  const row = await editClient(by, accountId, clientId, 'appearance', (tx) => updateWidgetClient(tx, accountId, clientId, { appearance }));
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
export async function deleteWidgetClient(by: AuditBy, { accountId, clientId }: { accountId: number; clientId: string }) {
  const deleted = await withAudit(
    accountId,
    by,
    'widget_client.deleted',
    (tx) => deleteWidgetClientRow(tx, accountId, clientId),
    (done) => (done ? clientId : null),
  );
  if (!deleted) throw new AppError('not_found', `No widget client ${clientId}.`);
  await publishInvalidation('widget-client', clientId); // revokeSockets finds no client and disconnects them
  return { client_id: clientId, deleted: true as const };
}

/** The operator's CLI door: the client id names its account, so no --account is needed. */
export async function deleteWidgetClientById(by: AuditBy, clientId: string) {
  const client = await getWidgetClientForAuth(await getDb(), clientId);
  if (!client) throw new AppError('not_found', `No widget client ${clientId}.`);
  return deleteWidgetClient(by, { accountId: client.accountId, clientId });
}

export async function rotateClientSecret(by: AuditBy, accountId: number, clientId: string) {
  const secret = `wcs_${randomBase62(40)}`;
  const row = await editClient(by, accountId, clientId, 'secret rotated', (tx) =>
    updateWidgetClient(tx, accountId, clientId, { secretHash: hashSecret(secret) }),
  );
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
