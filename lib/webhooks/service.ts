import { randomBytes, randomUUID } from 'node:crypto';
import { getDb, type Db } from '../../db/client';
import { recordAudit, withAudit } from '../audit/service';
import type { AuditBy } from '../audit/contract';
import {
  countEndpoints,
  deleteEndpoint,
  insertTestEvent,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  requeueDelivery,
  rotateEndpointSecret,
  setEndpointPaused,
  type EndpointRow,
} from '../../db/queries/webhooks';
import { requireAccount, validate } from '../accounts/service';
import { AppError } from '../core/errors';
import { parseOutboundUrl, resolveOutboundTarget, UnsafeAddressError } from '../net/address';
import { CreateWebhookInput, WebhookDeliveryId, WebhookEndpointId, type WebhookEndpointView } from './contract';
import {
  DELIVERY_LOG_LIMIT,
  HELD_TOO_LONG,
  MAX_ENDPOINTS_PER_ACCOUNT,
  REPLAY_HOURS,
  ROTATION_OVERLAP_HOURS,
  TEST_EVENT_TYPE,
  WEBHOOK_EVENT_TYPES,
} from './rules';
import { wakeWebhookWorker } from '../conversations/outbox';

/** Webhook endpoints of an account (docs/contracts.md §11): the CLI and the dashboard call these; each change writes its audit entry with it. */

/** `whsec_` + base64 of 32 random bytes (the Standard Webhooks form; the bytes are the HMAC key). */
function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', `${param}: ${message}`, { errors: [{ param, message }] });
}

/** Refuses what docs/contracts.md §11 refuses: not http(s), and private, loopback, link-local or metadata addresses after resolution. */
export async function checkWebhookUrl(raw: string): Promise<string> {
  try {
    const target = parseOutboundUrl(raw);
    await resolveOutboundTarget(target);
    return target.url.toString();
  } catch (e) {
    if (e instanceof UnsafeAddressError) throw invalid('url', e.message);
    throw e;
  }
}

function endpointId(id: unknown, param = 'endpoint-id'): string {
  return validate(WebhookEndpointId, id, { input: param });
}

const notFound = (id: string) => new AppError('not_found', `No webhook endpoint with id ${id}.`);

export async function createWebhookEndpoint(by: AuditBy, input: { accountId: unknown; url: unknown; events?: unknown }) {
  const v = validate(CreateWebhookInput, input, { accountId: 'account', events: 'event' });
  const url = await checkWebhookUrl(v.url);
  const events = v.events && v.events.length > 0 ? WEBHOOK_EVENT_TYPES.filter((t) => v.events!.includes(t)) : [...WEBHOOK_EVENT_TYPES];
  const db = await getDb();
  await requireAccount(db, v.accountId);
  if ((await countEndpoints(db, v.accountId)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
    throw new AppError('conflict', `An account may have at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first.`);
  }
  const secret = newSecret();
  const row = await withAudit(
    v.accountId,
    by,
    'webhook.created',
    (tx) => insertEndpoint(tx, v.accountId, { url, events, secret }),
    (r) => `${r.id} ${r.url}`,
  );
  return { endpoint_id: row.id, url: row.url, events: row.events, secret };
}

function toView(e: EndpointRow): WebhookEndpointView {
  return {
    endpoint_id: e.id,
    url: e.url,
    events: e.events,
    status: e.paused_at ? 'paused' : 'active',
    paused_at: e.paused_at,
    pause_reason: e.pause_reason,
    failing_since: e.failing_since,
    previous_secret_valid_until: e.previous_secret_until,
    created_at: e.created_at,
    last_delivery: e.last_delivery_status ? { status: e.last_delivery_status, at: e.last_delivery_at, http_status: e.last_status_code } : null,
  };
}

/** The account's endpoints without their secrets. */
export async function listWebhookEndpoints(accountId: unknown) {
  const id = validate(CreateWebhookInput.shape.accountId, accountId, { input: 'account' });
  const db = await getDb();
  await requireAccount(db, id);
  return { endpoints: (await listEndpoints(db, id)).map(toView) };
}

/** `accountId` null: the operator's CLI (any account); a number: only that account's endpoint. */
export async function deleteWebhookEndpoint(by: AuditBy, accountId: number | null, id: unknown) {
  const endpoint = endpointId(id);
  const deleted = await (await getDb()).transaction(async (t) => {
    const tx = t as unknown as Db;
    const row = await deleteEndpoint(tx, accountId, endpoint);
    if (row) await recordAudit(tx, row.accountId, by, 'webhook.deleted', `${endpoint} ${row.url}`);
    return row;
  });
  if (!deleted) throw notFound(endpoint);
  return { endpoint_id: endpoint, deleted: true as const };
}

/** A new secret, shown once; the previous one keeps signing for ROTATION_OVERLAP_HOURS. */
export async function rotateWebhookSecret(by: AuditBy, accountId: number, id: unknown) {
  const endpoint = endpointId(id);
  const secret = newSecret();
  const rotated = await withAudit(
    accountId,
    by,
    'webhook.updated',
    (tx) => rotateEndpointSecret(tx, accountId, endpoint, secret, ROTATION_OVERLAP_HOURS),
    (done) => (done ? `${endpoint}: secret rotated` : null),
  );
  if (!rotated) throw notFound(endpoint);
  return { endpoint_id: endpoint, secret, previous_secret_signs_for_hours: ROTATION_OVERLAP_HOURS };
}

/**
 * Pausing holds new deliveries; resuming sends the held ones of the last REPLAY_HOURS (fresh
 * schedule, in order) and marks older ones failed ("Send again" still works on them).
 */
export async function setWebhookPaused(by: AuditBy, accountId: number, id: unknown, paused: boolean) {
  const endpoint = endpointId(id);
  const done = await withAudit(
    accountId,
    by,
    'webhook.updated',
    (tx) => setEndpointPaused(tx, accountId, endpoint, paused, 'Paused by an admin', REPLAY_HOURS, HELD_TOO_LONG),
    (r) => (r ? `${endpoint}: ${paused ? 'paused' : 'resumed'}` : null),
  );
  if (!done) throw notFound(endpoint);
  if (!paused) wakeWebhookWorker();
  return { endpoint_id: endpoint, status: paused ? ('paused' as const) : ('active' as const), ...(paused ? {} : done) };
}

export async function listWebhookDeliveries(accountId: number, id: unknown) {
  const endpoint = endpointId(id);
  const log = await listDeliveries(await getDb(), accountId, endpoint, DELIVERY_LOG_LIMIT);
  if (!log) throw notFound(endpoint);
  return log;
}

/** "Send again": the same event (same webhook-id) is due at once, with a fresh retry schedule. */
export async function resendWebhookDelivery(accountId: number, id: unknown) {
  const delivery = validate(WebhookDeliveryId, id, { input: 'delivery' });
  if (!(await requeueDelivery(await getDb(), accountId, delivery))) {
    throw new AppError('not_found', `No delivery with id ${delivery} that can be sent again (it may be being sent right now).`);
  }
  wakeWebhookWorker();
  return { delivery_id: delivery, queued: true as const };
}

/**
 * "Send test event": a `webhook.test` event to this endpoint alone, through the outbox, so it is
 * signed, retried and logged like every delivery. Its data names the endpoint; no record is sent.
 */
export async function sendWebhookTestEvent(accountId: number, id: unknown) {
  const endpoint = endpointId(id);
  const eventId = `msg_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({ type: TEST_EVENT_TYPE, timestamp: new Date().toISOString(), data: { endpoint_id: endpoint, test: true } });
  if (!(await insertTestEvent(await getDb(), accountId, endpoint, { id: eventId, type: TEST_EVENT_TYPE, conversationId: randomUUID(), body })))
    throw notFound(endpoint);
  wakeWebhookWorker();
  return { endpoint_id: endpoint, event_id: eventId, queued: true as const };
}
