import { sql, type SQL } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/**
 * Webhook endpoints, the event outbox and deliveries (docs/contracts.md §11). Every query an admin's
 * request reaches takes the account; the delivery worker's queries act on the rows it leased
 * (by id and lease owner) for whichever account they belong to.
 */

export type EndpointRow = {
  id: string;
  url: string;
  events: string[];
  paused_at: string | null;
  pause_reason: string | null;
  failing_since: string | null;
  created_at: string;
  previous_secret_until: string | null;
  last_delivery_status: string | null;
  last_delivery_at: string | null;
  last_status_code: number | null;
};

const ENDPOINT_COLUMNS = sql`e.id, e.url, e.events, ${utcText(sql`e.paused_at`)} AS paused_at, e.pause_reason,
  ${utcText(sql`e.failing_since`)} AS failing_since, ${utcText(sql`e.created_at`)} AS created_at,
  CASE WHEN e.previous_secret_until > now() THEN ${utcText(sql`e.previous_secret_until`)} END AS previous_secret_until`;

export async function countEndpoints(db: Db, accountId: number): Promise<number> {
  const [row] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = ${accountId}`);
  return row?.n ?? 0;
}

export async function insertEndpoint(db: Db, accountId: number, v: { url: string; events: string[]; secret: string }) {
  const [row] = await rows<{ id: string; url: string; events: string[] }>(
    db,
    sql`
    INSERT INTO webhook_endpoints (account_id, url, events, secret)
    VALUES (${accountId}, ${v.url}, ${sql.param(v.events)}::text[], ${v.secret}) RETURNING id, url, events`,
  );
  return row!;
}

/** The account's endpoints, oldest first, each with its latest delivery (no secrets). */
export async function listEndpoints(db: Db, accountId: number): Promise<EndpointRow[]> {
  return rows<EndpointRow>(
    db,
    sql`
    SELECT ${ENDPOINT_COLUMNS}, ld.status AS last_delivery_status, ${utcText(sql`ld.last_attempt_at`)} AS last_delivery_at,
      ld.last_status_code
    FROM webhook_endpoints e
    LEFT JOIN LATERAL (
      SELECT d.status, d.last_attempt_at, d.last_status_code FROM webhook_deliveries d
      WHERE d.endpoint_id = e.id ORDER BY d.created_at DESC LIMIT 1
    ) ld ON true
    WHERE e.account_id = ${accountId} ORDER BY e.created_at, e.id`,
  );
}

/** Deletes an endpoint (and its deliveries). `accountId` null: the operator's CLI, any account. */
/** The deleted endpoint's account and URL, or null (`accountId` null: the operator's CLI, any account). */
export async function deleteEndpoint(db: Db, accountId: number | null, endpointId: string): Promise<{ accountId: number; url: string } | null> {
  const done = await rows<{ account_id: number; url: string }>(
    db,
    sql`
    DELETE FROM webhook_endpoints WHERE id = ${endpointId}
    ${accountId === null ? sql`` : sql`AND account_id = ${accountId}`} RETURNING account_id, url`,
  );
  return done[0] ? { accountId: done[0].account_id, url: done[0].url } : null;
}

/** A new signing secret; the current one becomes the previous one and keeps signing for `overlapHours`. */
export async function rotateEndpointSecret(db: Db, accountId: number, endpointId: string, secret: string, overlapHours: number): Promise<boolean> {
  const done = await rows<{ id: string }>(
    db,
    sql`
    UPDATE webhook_endpoints SET previous_secret = secret, secret = ${secret},
      previous_secret_until = now() + make_interval(hours => ${overlapHours})
    WHERE id = ${endpointId} AND account_id = ${accountId} RETURNING id`,
  );
  return done.length > 0;
}

/**
 * Pause (with the reason) or resume; resuming also forgets the failure streak. Pausing holds the
 * endpoint's pending deliveries (out of the claim's index); resuming sends the held ones created
 * within `replayHours` again with a fresh schedule and marks older ones failed with `heldTooLong`.
 * Null when the endpoint is not the account's.
 */
export async function setEndpointPaused(
  db: Db,
  accountId: number,
  endpointId: string,
  paused: boolean,
  reason: string,
  replayHours: number,
  heldTooLong: string,
): Promise<{ replayed: number; expired: number } | null> {
  return db.transaction(async (txRaw) => {
    const tx = txRaw as unknown as Db;
    const done = await rows<{ id: string }>(
      tx,
      sql`
      UPDATE webhook_endpoints SET
        paused_at = ${paused ? sql`COALESCE(paused_at, now())` : sql`NULL`},
        pause_reason = ${paused ? sql`COALESCE(pause_reason, ${reason})` : sql`NULL`},
        failing_since = ${paused ? sql`failing_since` : sql`NULL`}
      WHERE id = ${endpointId} AND account_id = ${accountId} RETURNING id`,
    );
    if (done.length === 0) return null;
    if (paused) {
      await holdDeliveries(tx, endpointId);
      return { replayed: 0, expired: 0 };
    }
    return releaseHeldDeliveries(tx, endpointId, replayHours, heldTooLong);
  });
}

/** The paused endpoint's pending deliveries become held (leased ones too: their outcome keeps them held). */
async function holdDeliveries(db: Db, endpointId: string): Promise<void> {
  await db.execute(sql`
    UPDATE webhook_deliveries d SET status = 'held' FROM webhook_endpoints e
    WHERE d.endpoint_id = ${endpointId} AND d.status = 'pending' AND e.id = d.endpoint_id AND e.paused_at IS NOT NULL`);
}

/** The active endpoint's held deliveries: due now with a fresh schedule if younger than `replayHours`, else failed. */
async function releaseHeldDeliveries(db: Db, endpointId: string, replayHours: number, heldTooLong: string) {
  const done = await rows<{ status: string }>(
    db,
    sql`
    WITH r AS (
      SELECT d.id, d.created_at >= now() - make_interval(hours => ${replayHours}) AS fresh
      FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.endpoint_id = ${endpointId} AND d.status = 'held' AND e.paused_at IS NULL
    )
    UPDATE webhook_deliveries d SET
      status = CASE WHEN r.fresh THEN 'pending' ELSE 'failed' END,
      attempts = CASE WHEN r.fresh THEN 0 ELSE d.attempts END,
      next_attempt_at = CASE WHEN r.fresh THEN now() ELSE d.next_attempt_at END,
      last_error = CASE WHEN r.fresh THEN d.last_error ELSE ${heldTooLong} END
    FROM r WHERE d.id = r.id RETURNING d.status`,
  );
  const replayed = done.filter((d) => d.status === 'pending').length;
  return { replayed, expired: done.length - replayed };
}

/**
 * Marks deliveries held longer than `replayHours` failed, so held rows stay bounded (then pruned
 * with their events). Probes the held index endpoint by endpoint (`OFFSET 0` keeps the planner
 * from turning that into a scan of every held row). Returns how many.
 */
export async function expireHeldDeliveries(db: Db, replayHours: number, heldTooLong: string): Promise<number> {
  const expired = await rows<{ id: string }>(
    db,
    sql`
    WITH old AS (
      SELECT h.id FROM webhook_endpoints e
      CROSS JOIN LATERAL (SELECT d.id FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'held'
        AND d.created_at < now() - make_interval(hours => ${replayHours}) OFFSET 0) h
      WHERE e.paused_at IS NOT NULL
    )
    UPDATE webhook_deliveries d SET status = 'failed', last_error = ${heldTooLong} FROM old WHERE d.id = old.id RETURNING d.id`,
  );
  return expired.length;
}

export async function hasSubscribedEndpoint(db: Db, accountId: number, type: string): Promise<boolean> {
  const [row] = await rows<{ one: number }>(
    db,
    sql`
    SELECT 1 AS one FROM webhook_endpoints WHERE account_id = ${accountId} AND ${type} = ANY(events) LIMIT 1`,
  );
  return row !== undefined;
}

/**
 * Writes an event and one delivery per endpoint of the account subscribed to its type: pending, or
 * held for a paused endpoint. Run it inside the transaction of the change. It takes the
 * conversation's row lock first, so the `seq`s of one conversation's events follow their commit
 * order (the worker's ordering relies on it), and a share lock on those endpoints, so a pause or
 * resume waits for this transaction and then holds or releases its deliveries too. A delivery
 * queued behind an earlier one of its conversation that waits for a retry is not due before it
 * (so the claim does not walk over it).
 */
export async function insertWebhookEvent(db: Db, accountId: number, e: { id: string; type: string; conversationId: string; body: string }): Promise<number> {
  const inserted = await rows<{ id: string }>(
    db,
    sql`
    WITH lock AS (
      SELECT id FROM conversations WHERE id = ${e.conversationId} AND account_id = ${accountId} FOR NO KEY UPDATE
    ), ev AS (
      INSERT INTO webhook_events (id, account_id, type, conversation_id, body)
      SELECT ${e.id}, ${accountId}, ${e.type}, ${e.conversationId}, ${e.body} FROM lock RETURNING id, seq
    ), ep AS (
      SELECT id, paused_at FROM webhook_endpoints WHERE account_id = ${accountId} AND ${e.type} = ANY(events) FOR SHARE
    )
    INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, conversation_id, event_seq, status, next_attempt_at)
    SELECT ${accountId}, ep.id, ev.id, ${e.conversationId}, ev.seq, CASE WHEN ep.paused_at IS NULL THEN 'pending' ELSE 'held' END,
      GREATEST(now(), (SELECT max(p.next_attempt_at) FROM webhook_deliveries p
        WHERE p.endpoint_id = ep.id AND p.conversation_id = ${e.conversationId} AND p.status = 'pending'))
    FROM ev CROSS JOIN ep
    RETURNING id`,
  );
  return inserted.length;
}

export type ClaimedDelivery = {
  id: string;
  account_id: number;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  body: string;
  url: string;
  secret: string;
  previous_secret: string | null;
};

export type ClaimLimits = {
  leaseSeconds: number;
  perEndpoint: number;
  perAccount: number;
  limit: number;
  /** What this instance is sending right now, per endpoint id and per account id. */
  busyEndpoints: Record<string, number>;
  busyAccounts: Record<string, number>;
};

/**
 * The claim, as SQL (the plan test explains it). Only the oldest pending delivery of a
 * conversation to an endpoint is due (order per conversation); held deliveries and paused
 * endpoints are never read. It walks the endpoints that have pending deliveries (one index probe
 * each), takes each one's oldest due deliveries up to its free slots, then each account's up to
 * its free share, and orders them by rank within their account first: every account's oldest due
 * delivery is claimed before any account's second (FOR UPDATE SKIP LOCKED: each to one instance).
 */
export function claimDueDeliveriesSql(owner: string, o: ClaimLimits): SQL {
  return sql`
    WITH RECURSIVE eps AS (
      (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.status = 'pending' ORDER BY d.endpoint_id LIMIT 1)
      UNION ALL
      SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.endpoint_id > eps.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
      FROM eps WHERE eps.endpoint_id IS NOT NULL
    ), heads AS (
      SELECT e.account_id, h.id, h.endpoint_id, h.next_attempt_at,
        row_number() OVER (PARTITION BY h.endpoint_id ORDER BY h.next_attempt_at, h.id) AS ern
      FROM eps JOIN webhook_endpoints e ON e.id = eps.endpoint_id AND e.paused_at IS NULL
      CROSS JOIN LATERAL (
        SELECT d.id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.endpoint_id = eps.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= now()
          AND (d.lease_until IS NULL OR d.lease_until < now())
          AND NOT EXISTS (
            SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id AND p.conversation_id = d.conversation_id
              AND p.status = 'pending' AND p.event_seq < d.event_seq)
        ORDER BY d.next_attempt_at LIMIT ${o.perEndpoint}
      ) h
    ), fit AS (
      SELECT id, account_id, next_attempt_at FROM heads
      WHERE ern <= ${o.perEndpoint} - COALESCE((${JSON.stringify(o.busyEndpoints)}::jsonb ->> endpoint_id::text)::int, 0)
    ), ranked AS (
      SELECT id, account_id, next_attempt_at, row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, id) AS arn FROM fit
    ), cand AS (
      SELECT id FROM ranked
      WHERE arn <= ${o.perAccount} - COALESCE((${JSON.stringify(o.busyAccounts)}::jsonb ->> account_id::text)::int, 0)
      ORDER BY arn, next_attempt_at LIMIT ${o.limit}
    ), locked AS (
      SELECT id FROM webhook_deliveries
      WHERE id IN (SELECT id FROM cand) AND status = 'pending' AND (lease_until IS NULL OR lease_until < now())
      FOR UPDATE SKIP LOCKED
    )
    UPDATE webhook_deliveries d SET lease_owner = ${owner}, lease_until = now() + make_interval(secs => ${o.leaseSeconds})
    FROM locked l, webhook_events ev, webhook_endpoints e
    WHERE d.id = l.id AND ev.id = d.event_id AND e.id = d.endpoint_id
    RETURNING d.id, d.account_id, d.endpoint_id, d.event_id, d.attempts, ev.body, e.url, e.secret,
      CASE WHEN e.previous_secret_until > now() THEN e.previous_secret END AS previous_secret`;
}

/** Leases due deliveries to `owner` within `o`'s limits (see claimDueDeliveriesSql). */
export async function claimDueDeliveries(db: Db, owner: string, o: ClaimLimits): Promise<ClaimedDelivery[]> {
  return rows<ClaimedDelivery>(db, claimDueDeliveriesSql(owner, o));
}

export type AttemptOutcome = { statusCode: number | null; latencyMs: number; error: string | null };

/** A 2xx: delivered; the endpoint's failure streak ends. */
export async function markDelivered(db: Db, owner: string, deliveryId: string, a: AttemptOutcome): Promise<void> {
  await db.execute(sql`
    WITH d AS (
      UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1, last_attempt_at = now(),
        last_status_code = ${a.statusCode}, last_latency_ms = ${a.latencyMs}, last_error = NULL, delivered_at = now(),
        lease_owner = NULL, lease_until = NULL
      WHERE id = ${deliveryId} AND lease_owner = ${owner} RETURNING endpoint_id
    )
    UPDATE webhook_endpoints e SET failing_since = NULL FROM d WHERE e.id = d.endpoint_id AND e.failing_since IS NOT NULL`);
}

/**
 * A failed attempt: due again in `retryInMs` (held again if its endpoint was paused meanwhile), or
 * `failed` when that is null; the later deliveries of its conversation wait at least as long. The
 * endpoint's failure streak starts (if it had not), and an endpoint failing for longer than
 * `pauseAfterMs` is paused with `pauseReason` and its deliveries held. Returns whether this attempt paused it.
 */
export async function markAttemptFailed(
  db: Db,
  owner: string,
  deliveryId: string,
  a: AttemptOutcome,
  retryInMs: number | null,
  pauseAfterMs: number,
  pauseReason: string,
): Promise<boolean> {
  const [row] = await rows<{ id: string; paused_now: boolean }>(
    db,
    sql`
    WITH d AS (
      UPDATE webhook_deliveries SET attempts = attempts + 1, last_attempt_at = now(),
        last_status_code = ${a.statusCode}, last_latency_ms = ${a.latencyMs}, last_error = ${a.error},
        status = ${retryInMs === null ? sql`'failed'` : sql`CASE WHEN status = 'held' THEN 'held' ELSE 'pending' END`},
        next_attempt_at = ${retryInMs === null ? sql`next_attempt_at` : sql`now() + make_interval(secs => ${retryInMs / 1000})`},
        lease_owner = NULL, lease_until = NULL
      WHERE id = ${deliveryId} AND lease_owner = ${owner} RETURNING endpoint_id, conversation_id, event_seq, status, next_attempt_at
    ), later AS (
      UPDATE webhook_deliveries f SET next_attempt_at = d.next_attempt_at FROM d
      WHERE d.status = 'pending' AND f.endpoint_id = d.endpoint_id AND f.conversation_id = d.conversation_id
        AND f.status = 'pending' AND f.event_seq > d.event_seq AND f.next_attempt_at < d.next_attempt_at
    ), e AS (
      SELECT ep.id, ep.paused_at IS NULL AND ep.failing_since IS NOT NULL
        AND ep.failing_since < now() - make_interval(secs => ${pauseAfterMs / 1000}) AS pause
      FROM webhook_endpoints ep JOIN d ON ep.id = d.endpoint_id FOR UPDATE OF ep
    )
    UPDATE webhook_endpoints ep SET failing_since = COALESCE(ep.failing_since, now()),
      paused_at = CASE WHEN e.pause THEN now() ELSE ep.paused_at END,
      pause_reason = CASE WHEN e.pause THEN ${pauseReason} || ' (failing since ' || ${utcText(sql`ep.failing_since`)} || ' UTC)' ELSE ep.pause_reason END
    FROM e WHERE ep.id = e.id RETURNING ep.id, e.pause AS paused_now`,
  );
  if (!row?.paused_now) return false;
  await holdDeliveries(db, row.id);
  return true;
}

/** Gives leased deliveries back at once (a stopping instance), to be sent by whoever claims them next. */
export async function releaseDeliveryLeases(db: Db, owner: string, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db.execute(sql`
    UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL
    WHERE lease_owner = ${owner} AND id = ANY(${sql.param(deliveryIds)}::uuid[])`);
}

/**
 * Gives back every lease `owner` holds but `keep` (what it is sending): a claim whose reply was lost
 * (the primary died after its commit) leased deliveries nobody sends, and their conversations' later
 * events would wait the lease out behind them.
 */
export function releaseLeasesExceptSql(owner: string, keep: string[]): SQL {
  return sql`
    UPDATE webhook_deliveries SET lease_owner = NULL, lease_until = NULL
    WHERE status = 'pending' AND lease_owner = ${owner} AND lease_until > now() AND NOT (id = ANY(${sql.param(keep)}::uuid[]))
    RETURNING id`;
}

export async function releaseLeasesExcept(db: Db, owner: string, keep: string[]): Promise<number> {
  return (await rows<{ id: string }>(db, releaseLeasesExceptSql(owner, keep))).length;
}

export type DeliveryLogRow = {
  id: string;
  event_id: string;
  type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_latency_ms: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
};

/** An endpoint's latest deliveries, newest first (null when the endpoint is not the account's). */
export async function listDeliveries(db: Db, accountId: number, endpointId: string, limit: number): Promise<DeliveryLogRow[] | null> {
  const [owned] = await rows<{ id: string }>(db, sql`SELECT id FROM webhook_endpoints WHERE id = ${endpointId} AND account_id = ${accountId}`);
  if (!owned) return null;
  return rows<DeliveryLogRow>(
    db,
    sql`
    SELECT d.id, d.event_id, ev.type, d.status, d.attempts, d.last_status_code, d.last_latency_ms, d.last_error,
      ${utcText(sql`d.last_attempt_at`)} AS last_attempt_at,
      CASE WHEN d.status = 'pending' THEN ${utcText(sql`d.next_attempt_at`)} END AS next_attempt_at,
      ${utcText(sql`d.created_at`)} AS created_at
    FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
    WHERE d.endpoint_id = ${endpointId} AND d.account_id = ${accountId}
    ORDER BY d.created_at DESC, ev.seq DESC LIMIT ${limit}`,
  );
}

/** "Send again": the delivery is due now with a fresh retry schedule (same event, same webhook-id). */
export async function requeueDelivery(db: Db, accountId: number, deliveryId: string): Promise<boolean> {
  const done = await rows<{ id: string }>(
    db,
    sql`
    UPDATE webhook_deliveries d SET status = CASE WHEN e.paused_at IS NULL THEN 'pending' ELSE 'held' END,
      attempts = 0, next_attempt_at = now(), delivered_at = NULL
    FROM webhook_endpoints e
    WHERE d.id = ${deliveryId} AND d.account_id = ${accountId} AND e.id = d.endpoint_id
      AND (d.lease_until IS NULL OR d.lease_until < now()) RETURNING d.id`,
  );
  return done.length > 0;
}

/**
 * "Send test event": an event for one endpoint only, with a conversation id of its own (so it waits
 * behind no conversation's deliveries), pending or held like any other. False when the endpoint is
 * not the account's.
 */
export async function insertTestEvent(
  db: Db,
  accountId: number,
  endpointId: string,
  e: { id: string; type: string; conversationId: string; body: string },
): Promise<boolean> {
  const inserted = await rows<{ id: string }>(
    db,
    sql`
    WITH ep AS (
      SELECT id, paused_at FROM webhook_endpoints WHERE id = ${endpointId} AND account_id = ${accountId} FOR SHARE
    ), ev AS (
      INSERT INTO webhook_events (id, account_id, type, conversation_id, body)
      SELECT ${e.id}, ${accountId}, ${e.type}, ${e.conversationId}, ${e.body} FROM ep RETURNING id, seq
    )
    INSERT INTO webhook_deliveries (account_id, endpoint_id, event_id, conversation_id, event_seq, status)
    SELECT ${accountId}, ep.id, ev.id, ${e.conversationId}, ev.seq, CASE WHEN ep.paused_at IS NULL THEN 'pending' ELSE 'held' END
    FROM ev CROSS JOIN ep
    RETURNING id`,
  );
  return inserted.length > 0;
}

/** Deletes up to `limit` events older than `days` with no pending or held delivery (their deliveries go with them). Returns how many. */
export async function pruneFinishedEvents(db: Db, days: number, limit: number): Promise<number> {
  const gone = await rows<{ id: string }>(
    db,
    sql`
    DELETE FROM webhook_events WHERE id IN (
      SELECT ev.id FROM webhook_events ev
      WHERE ev.created_at < now() - make_interval(days => ${days})
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.status IN ('pending', 'held'))
      LIMIT ${limit})
    RETURNING id`,
  );
  return gone.length;
}
