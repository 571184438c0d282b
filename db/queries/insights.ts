import { setTimeout as sleep } from 'node:timers/promises';
import { type SQL, sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/** UTC days, both inclusive (YYYY-MM-DD), and optionally one channel of the account. */
export type InsightsWindow = { from: string; to: string; channelId: number | null };

/** One UTC day's figures, or (day null) the whole window's. Medians and means are null when nothing was measured. */
export type InsightsFigures = {
  day: string | null;
  conversations: number;
  ai_resolved: number;
  ai_involved: number;
  ai_resolved_confirmed: number;
  handoffs: number;
  median_first_response_seconds: number | null;
  median_resolution_seconds: number | null;
  csat_ai_responses: number;
  csat_ai_mean: number | null;
  csat_ai_high: number;
  csat_human_responses: number;
  csat_human_mean: number | null;
  csat_human_high: number;
  declined_answers: number;
  likes: number;
  dislikes: number;
};

const IDLE_AFTER = sql`interval '30 minutes'`;
const TODAY = sql`(now() AT TIME ZONE 'UTC')::date`;
const utcDay = (col: SQL) => sql`(${col} AT TIME ZONE 'UTC')::date`;
const dayStart = (day: SQL) => sql`(${day}::timestamp AT TIME ZONE 'UTC')`;
/** A duration's histogram bucket: whole seconds below two minutes, then 1 % wide (docs/decisions/insights.md). */
const bucketOf = (s: SQL) => sql`CASE WHEN ${s} < 120 THEN floor(${s})::int ELSE 120 + floor(100 * ln(${s} / 120))::int END`;

/**
 * A visitor's thanks, approval or goodbye: a question of at most THANKS_MAX_CHARS matching THANKS and
 * not NOT_THANKS (a question mark or a negation). Alternations of literals only: linear in the text.
 */
const THANKS_MAX_CHARS = 80;
const THANKS =
  '\\m(thanks?|thank (you|u)|thx|thnx|tysm|ty|cheers|appreciated?|perfect|great|awesome|excellent|brilliant|wonderful|fantastic|amazing|helpful|got it|that help(s|ed)|(that|it) work(s|ed)|that did it|solved|sorted|all good|all set|bye|goodbye)\\M';
const NOT_THANKS = "\\?|\\m(not|no|nope|never|but|still|however|wrong|useless|unhelpful)\\M|n[’']t\\M";

/** The channel_id of a day's row over all its channels (channel ids start at 1). */
const ALL_CHANNELS = 0;
/** Which rollup rows to compute: every channel's and the all-channels row (refresh), the all-channels row, or one channel's. */
type RowsOf = 'every' | 'all' | number;

const ROLLUP_COLUMNS = sql.raw(
  'channel_id, day, conversations, ai_resolved, ai_involved, ai_resolved_confirmed, handoffs, csat_ai_responses, csat_ai_sum, csat_ai_high, csat_human_responses, csat_human_sum, csat_human_high, median_first_response_seconds, median_resolution_seconds, first_response_hist, resolution_hist, declined_answers, likes, dislikes, valid_until',
);

/**
 * The rollup's rows (per UTC creation day: the rows `rowsOf` asks for) computed from the
 * conversations and responses created in [lo, hi), optionally only on `days`. This is where every
 * figure is defined: a person was involved when the conversation was ever handed off or is handled
 * by a person now; AI-resolved is closed (any status but Open, Waiting, Snoozed) or idle 30 minutes,
 * with no person and no dislike; the AI was involved when it gave at least one answer that was not
 * declined; an AI-resolved conversation is confirmed when the visitor liked an answer, rated it 4–5,
 * or thanked (THANKS) after an answer that was not declined; `valid_until` is when the first
 * not-yet-idle candidate turns idle.
 */
function rollupRows(accountId: number, lo: SQL, hi: SQL, days: SQL | null, rowsOf: RowsOf): SQL {
  const channelId = typeof rowsOf === 'number' ? rowsOf : null;
  const filter = (alias: string) =>
    sql`${days === null ? sql`` : sql`AND ${utcDay(sql.raw(`${alias}.created_at`))} = ANY(${days})`} ${channelId === null ? sql`` : sql`AND ${sql.raw(alias)}.channel_id = ${channelId}`}`;
  // Each row counts in its channel's row and in the day's all-channels row (channel 0).
  const keys = (channel: SQL) =>
    rowsOf === 'every' ? sql`(VALUES (${channel}), (${ALL_CHANNELS}::int))` : sql`(VALUES (${rowsOf === 'all' ? ALL_CHANNELS : channelId}::int))`;
  return sql`
    WITH c AS (
      SELECT c.channel_id AS own_channel_id, ${utcDay(sql`c.created_at`)} AS day,
        (c.handed_off_at IS NOT NULL OR c.handled_by = 'human') AS person,
        c.status NOT IN ('Open', 'Waiting', 'Snoozed') AS closed,
        (c.handed_off_at IS NULL AND c.handled_by <> 'human' AND NOT COALESCE(ra.disliked, false)) AS candidate,
        COALESCE(ra.answered, false) AS ai_involved,
        (COALESCE(ra.liked, false) OR c.csat >= 4 OR COALESCE(ra.last_thanks > ra.first_answer, false)) AS confirmed,
        c.id, c.created_at, c.updated_at, c.resolved_at, c.handed_off_at, c.first_reply_at, c.csat
      FROM conversations c
      LEFT JOIN LATERAL (
        SELECT bool_or(NOT r.declined) AS answered, bool_or(r.dislikes > 0) AS disliked, bool_or(r.likes > 0) AS liked,
          min(r.created_at) FILTER (WHERE NOT r.declined) AS first_answer,
          max(r.created_at) FILTER (WHERE length(r.question) <= ${THANKS_MAX_CHARS} AND r.question ~* ${THANKS} AND r.question !~* ${NOT_THANKS}) AS last_thanks
        FROM responses r WHERE r.account_id = ${accountId} AND r.conversation_id = c.id
      ) ra ON true
      WHERE c.account_id = ${accountId} AND c.created_at >= ${lo} AND c.created_at < ${hi} ${filter('c')}
    ), f AS (
      SELECT k.ch AS channel_id, c.*,
        extract(epoch FROM c.first_reply_at - c.handed_off_at)::float8 AS first_response,
        CASE WHEN c.closed THEN extract(epoch FROM c.resolved_at - c.created_at)::float8 END AS resolution
      FROM c, LATERAL ${keys(sql`c.own_channel_id`)} k(ch)
    ), cd AS (
      SELECT channel_id, day, count(*)::int AS conversations,
        count(*) FILTER (WHERE candidate AND (closed OR updated_at <= now() - ${IDLE_AFTER}))::int AS ai_resolved,
        count(*) FILTER (WHERE ai_involved)::int AS ai_involved,
        count(*) FILTER (WHERE candidate AND confirmed AND (closed OR updated_at <= now() - ${IDLE_AFTER}))::int AS ai_resolved_confirmed,
        count(*) FILTER (WHERE person)::int AS handoffs,
        count(csat) FILTER (WHERE NOT person)::int AS csat_ai_responses,
        COALESCE(sum(csat) FILTER (WHERE NOT person), 0)::int AS csat_ai_sum,
        count(*) FILTER (WHERE NOT person AND csat >= 4)::int AS csat_ai_high,
        count(csat) FILTER (WHERE person)::int AS csat_human_responses,
        COALESCE(sum(csat) FILTER (WHERE person), 0)::int AS csat_human_sum,
        count(*) FILTER (WHERE person AND csat >= 4)::int AS csat_human_high,
        round(percentile_cont(0.5) WITHIN GROUP (ORDER BY first_response) FILTER (WHERE first_response >= 0))::float8 AS median_first_response_seconds,
        round(percentile_cont(0.5) WITHIN GROUP (ORDER BY resolution) FILTER (WHERE resolution >= 0))::float8 AS median_resolution_seconds,
        min(updated_at + ${IDLE_AFTER}) FILTER (WHERE candidate AND NOT closed AND updated_at > now() - ${IDLE_AFTER}) AS valid_until
      FROM f GROUP BY channel_id, day
    ), h AS (
      SELECT channel_id, day,
        COALESCE(jsonb_object_agg(b, v) FILTER (WHERE kind = 'f'), '{}'::jsonb) AS first_response_hist,
        COALESCE(jsonb_object_agg(b, v) FILTER (WHERE kind = 'r'), '{}'::jsonb) AS resolution_hist
      FROM (
        SELECT channel_id, day, kind, b, jsonb_build_array(count(*), sum(s), min(s), max(s)) AS v
        FROM (SELECT f.channel_id, f.day, x.kind, x.s, ${bucketOf(sql`x.s`)} AS b
              FROM f, LATERAL (VALUES ('f', f.first_response), ('r', f.resolution)) x(kind, s) WHERE x.s >= 0) d
        GROUP BY channel_id, day, kind, b
      ) y
      GROUP BY channel_id, day
    ), rd AS (
      SELECT k.ch AS channel_id, ${utcDay(sql`r.created_at`)} AS day, count(*) FILTER (WHERE r.declined)::int AS declined_answers,
        COALESCE(sum(r.likes), 0)::bigint AS likes, COALESCE(sum(r.dislikes), 0)::bigint AS dislikes
      FROM responses r, LATERAL ${keys(sql`r.channel_id`)} k(ch)
      WHERE r.account_id = ${accountId} AND r.created_at >= ${lo} AND r.created_at < ${hi} ${filter('r')}
      GROUP BY 1, 2
    )
    SELECT channel_id, day, COALESCE(cd.conversations, 0) AS conversations, COALESCE(cd.ai_resolved, 0) AS ai_resolved,
      COALESCE(cd.ai_involved, 0) AS ai_involved, COALESCE(cd.ai_resolved_confirmed, 0) AS ai_resolved_confirmed,
      COALESCE(cd.handoffs, 0) AS handoffs, COALESCE(cd.csat_ai_responses, 0) AS csat_ai_responses,
      COALESCE(cd.csat_ai_sum, 0) AS csat_ai_sum, COALESCE(cd.csat_ai_high, 0) AS csat_ai_high,
      COALESCE(cd.csat_human_responses, 0) AS csat_human_responses, COALESCE(cd.csat_human_sum, 0) AS csat_human_sum,
      COALESCE(cd.csat_human_high, 0) AS csat_human_high,
      cd.median_first_response_seconds, cd.median_resolution_seconds,
      COALESCE(h.first_response_hist, '{}'::jsonb) AS first_response_hist, COALESCE(h.resolution_hist, '{}'::jsonb) AS resolution_hist,
      COALESCE(rd.declined_answers, 0) AS declined_answers, COALESCE(rd.likes, 0) AS likes, COALESCE(rd.dislikes, 0) AS dislikes,
      cd.valid_until
    FROM cd FULL JOIN rd USING (channel_id, day) LEFT JOIN h USING (channel_id, day)`;
}

/**
 * Sums rollup rows (`src`: one per day, all channels or one channel) into the window's figures
 * (GROUPING SETS gives each day's row and the total). A day's medians are the row's, exact; the
 * window's are read from the merged histogram: the value at the middle rank(s) is exact when it is
 * its bucket's smallest or largest value or its bucket holds at most three values (count, sum, min
 * and max determine them), else the bucket's mean; so it is within a bucket's width.
 */
function figuresFrom(src: SQL): SQL {
  return sql`
    WITH src AS (${src}), tot AS (
      SELECT to_char(day, 'YYYY-MM-DD') AS day,
        COALESCE(sum(conversations), 0)::int AS conversations, COALESCE(sum(ai_resolved), 0)::int AS ai_resolved,
        COALESCE(sum(ai_involved), 0)::int AS ai_involved, COALESCE(sum(ai_resolved_confirmed), 0)::int AS ai_resolved_confirmed,
        COALESCE(sum(handoffs), 0)::int AS handoffs,
        min(median_first_response_seconds) AS median_first_response_seconds, min(median_resolution_seconds) AS median_resolution_seconds,
        COALESCE(sum(csat_ai_responses), 0)::int AS csat_ai_responses,
        round(sum(csat_ai_sum)::numeric / NULLIF(sum(csat_ai_responses), 0), 2)::float8 AS csat_ai_mean,
        COALESCE(sum(csat_ai_high), 0)::int AS csat_ai_high,
        COALESCE(sum(csat_human_responses), 0)::int AS csat_human_responses,
        round(sum(csat_human_sum)::numeric / NULLIF(sum(csat_human_responses), 0), 2)::float8 AS csat_human_mean,
        COALESCE(sum(csat_human_high), 0)::int AS csat_human_high,
        COALESCE(sum(declined_answers), 0)::int AS declined_answers, COALESCE(sum(likes), 0)::int AS likes,
        COALESCE(sum(dislikes), 0)::int AS dislikes
      FROM src GROUP BY GROUPING SETS ((day), ())
    ), hg AS (
      SELECT e.kind, e.bucket, sum(e.n) AS n, sum(e.s) AS s, min(e.lo) AS lo, max(e.hi) AS hi
      FROM src, LATERAL (
        SELECT 'f' AS kind, key::int AS bucket, (value->>0)::numeric AS n, (value->>1)::float8 AS s, (value->>2)::float8 AS lo, (value->>3)::float8 AS hi
        FROM jsonb_each(src.first_response_hist)
        UNION ALL
        SELECT 'r', key::int, (value->>0)::numeric, (value->>1)::float8, (value->>2)::float8, (value->>3)::float8 FROM jsonb_each(src.resolution_hist)
      ) e
      GROUP BY e.kind, e.bucket
    ), hc AS (
      SELECT hg.*, sum(n) OVER (PARTITION BY kind ORDER BY bucket) - n AS before, sum(n) OVER (PARTITION BY kind) AS total FROM hg
    ), med AS (
      SELECT kind, round(min(v) + (max(v) - min(v)) * 0.5)::float8 AS median
      FROM hc, LATERAL (SELECT DISTINCT p FROM unnest(ARRAY[floor((total - 1) / 2), ceil((total - 1) / 2)]) p) ps,
        LATERAL (SELECT CASE WHEN p = before THEN lo WHEN p = before + n - 1 THEN hi WHEN n = 3 THEN s - lo - hi ELSE s / n::float8 END AS v) pv
      WHERE p >= before AND p < before + n
      GROUP BY kind
    )
    SELECT tot.day, tot.conversations, tot.ai_resolved, tot.ai_involved, tot.ai_resolved_confirmed, tot.handoffs,
      CASE WHEN tot.day IS NULL THEN (SELECT median FROM med WHERE kind = 'f') ELSE tot.median_first_response_seconds END AS median_first_response_seconds,
      CASE WHEN tot.day IS NULL THEN (SELECT median FROM med WHERE kind = 'r') ELSE tot.median_resolution_seconds END AS median_resolution_seconds,
      tot.csat_ai_responses, tot.csat_ai_mean, tot.csat_ai_high, tot.csat_human_responses, tot.csat_human_mean, tot.csat_human_high,
      tot.declined_answers, tot.likes, tot.dislikes
    FROM tot ORDER BY tot.day NULLS FIRST`;
}

/** How many days one refresh statement recomputes at most. */
const REFRESH_DAYS = 31;
/** Rows (conversations and responses created on its days) one refresh statement reads at most, a day's more alone: a big import's month would outlast the statement timeout. */
const REFRESH_ROWS = 50_000;

/**
 * Brings the account's rollup rows of the window's past days up to date, inside `tx`: under the
 * account's advisory lock (refreshes on any instance run one at a time, each statement's snapshot
 * after the previous refresh committed), it deletes the dirty marks it can see (their writers
 * committed, so the next statements see their changes) and recomputes those days and the days whose
 * `valid_until` passed. A mark committed meanwhile stays for the next read. Today is read live.
 * False, having done nothing, when another transaction holds the lock (the caller never waits on it holding a connection).
 */
async function refreshRollup(tx: Db, accountId: number, w: InsightsWindow): Promise<boolean> {
  const [got] = await rows<{ ok: boolean }>(tx, sql`SELECT pg_try_advisory_xact_lock(hashtext('svc.insights'), ${accountId}) AS ok`);
  if (!got?.ok) return false;
  const due = await rows<{ day: string }>(
    tx,
    sql`
    WITH gone AS (
      DELETE FROM insights_dirty_days
      WHERE account_id = ${accountId} AND day >= ${w.from}::date AND day <= ${w.to}::date AND day < ${TODAY}
      RETURNING day
    ), due AS (
      SELECT day FROM gone
      UNION
      SELECT day FROM insights_daily
      WHERE account_id = ${accountId} AND day >= ${w.from}::date AND day <= ${w.to}::date AND day < ${TODAY} AND valid_until <= now()
    )
    SELECT to_char(day, 'YYYY-MM-DD') AS day FROM due
    WHERE NOT EXISTS (SELECT 1 FROM insights_kept_days k WHERE k.account_id = ${accountId} AND k.day = due.day)
    ORDER BY 1`,
  );
  // Today's marks (one per writing transaction) stay until the day is past: kept to one per day.
  await tx.execute(sql`
    WITH squashed AS (DELETE FROM insights_dirty_days WHERE account_id = ${accountId} AND day >= ${TODAY} AND xid <> 0 RETURNING day)
    INSERT INTO insights_dirty_days (account_id, day, xid) SELECT DISTINCT ${accountId}::int, day, 0 FROM squashed ON CONFLICT DO NOTHING`);
  await recomputeDays(
    tx,
    accountId,
    due.map((d) => d.day),
  );
  return true;
}

/** Recomputes the account's rollup rows of these past days ('YYYY-MM-DD', ascending) from the rows, inside `tx`. */
async function recomputeDays(tx: Db, accountId: number, days: string[]): Promise<void> {
  if (days.length === 0) return;
  for (const chunk of refreshChunks(days, await rowsPerDay(tx, accountId, days))) {
    const daySet = sql`${`{${chunk.join(',')}}`}::date[]`;
    await tx.execute(sql`
      WITH fresh AS (${rollupRows(accountId, dayStart(sql`${chunk[0]}::date`), dayStart(sql`(${chunk.at(-1)}::date + 1)`), daySet, 'every')}),
      up AS (
        INSERT INTO insights_daily (account_id, ${ROLLUP_COLUMNS}) SELECT ${accountId}, ${ROLLUP_COLUMNS} FROM fresh
        ON CONFLICT (account_id, day, channel_id) DO UPDATE SET conversations = EXCLUDED.conversations, ai_resolved = EXCLUDED.ai_resolved,
          ai_involved = EXCLUDED.ai_involved, ai_resolved_confirmed = EXCLUDED.ai_resolved_confirmed,
          handoffs = EXCLUDED.handoffs, csat_ai_responses = EXCLUDED.csat_ai_responses, csat_ai_sum = EXCLUDED.csat_ai_sum,
          csat_ai_high = EXCLUDED.csat_ai_high, csat_human_responses = EXCLUDED.csat_human_responses, csat_human_sum = EXCLUDED.csat_human_sum,
          csat_human_high = EXCLUDED.csat_human_high, median_first_response_seconds = EXCLUDED.median_first_response_seconds,
          median_resolution_seconds = EXCLUDED.median_resolution_seconds, first_response_hist = EXCLUDED.first_response_hist,
          resolution_hist = EXCLUDED.resolution_hist, declined_answers = EXCLUDED.declined_answers, likes = EXCLUDED.likes,
          dislikes = EXCLUDED.dislikes, valid_until = EXCLUDED.valid_until
      )
      DELETE FROM insights_daily d WHERE d.account_id = ${accountId} AND d.day = ANY(${daySet})
        AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.channel_id = d.channel_id AND f.day = d.day)`);
  }
}

/** Conversations and responses the account created on each of these days (index-only counts). */
async function rowsPerDay(tx: Db, accountId: number, days: string[]): Promise<Map<string, number>> {
  const counted = await rows<{ day: string; n: number }>(
    tx,
    sql`
    SELECT to_char(d.day, 'YYYY-MM-DD') AS day,
      ((SELECT count(*) FROM conversations c WHERE c.account_id = ${accountId} AND c.created_at >= ${dayStart(sql`d.day`)} AND c.created_at < ${dayStart(sql`(d.day + 1)`)})
        + (SELECT count(*) FROM responses r WHERE r.account_id = ${accountId} AND r.created_at >= ${dayStart(sql`d.day`)} AND r.created_at < ${dayStart(sql`(d.day + 1)`)}))::int AS n
    FROM unnest(${`{${days.join(',')}}`}::date[]) d(day)`,
  );
  return new Map(counted.map((c) => [c.day, c.n]));
}

/** Consecutive runs of the (ascending) days, each at most REFRESH_DAYS long and REFRESH_ROWS heavy (a heavier day alone). */
export function refreshChunks(days: string[], rowsOf: Map<string, number>): string[][] {
  const chunks: string[][] = [];
  let chunk: string[] = [];
  let weight = 0;
  for (const day of days) {
    const n = rowsOf.get(day) ?? 0;
    if (chunk.length > 0 && (chunk.length >= REFRESH_DAYS || weight + n > REFRESH_ROWS)) {
      chunks.push(chunk);
      chunk = [];
      weight = 0;
    }
    chunk.push(day);
    weight += n;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * Before a retention or erasure deletes conversations (docs/contracts.md §18): the past days their
 * conversations and responses were created on are rolled up now, as they are, and kept from then
 * on (insights_kept_days: never recomputed, so the deletes never change them). Inside the deleting
 * transaction, which sets svc.keep_insights so its deletes mark no day dirty. Waits for another
 * refresh of the account (short). `ids`: the conversations about to be deleted.
 */
export async function keepInsightsDays(tx: Db, accountId: number, ids: string[]): Promise<void> {
  const idSet = sql`${`{${ids.join(',')}}`}::uuid[]`;
  const days = await rows<{ day: string }>(
    tx,
    sql`
    WITH touched AS (
      SELECT ${utcDay(sql`created_at`)} AS day FROM conversations WHERE account_id = ${accountId} AND id = ANY(${idSet})
      UNION
      SELECT ${utcDay(sql`created_at`)} FROM responses WHERE account_id = ${accountId} AND conversation_id = ANY(${idSet})
    )
    SELECT to_char(day, 'YYYY-MM-DD') AS day FROM touched
    WHERE day < ${TODAY} AND NOT EXISTS (SELECT 1 FROM insights_kept_days k WHERE k.account_id = ${accountId} AND k.day = touched.day)
    ORDER BY 1`,
  );
  await tx.execute(sql`SELECT set_config('svc.keep_insights', 'on', true)`);
  if (days.length === 0) return;
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('svc.insights'), ${accountId})`);
  const list = days.map((d) => d.day);
  const daySet = sql`${`{${list.join(',')}}`}::date[]`;
  // Only days not already current are recomputed here (refreshInsightsBeforeDeleting usually did it outside the transaction).
  const stale = await rows<{ day: string }>(
    tx,
    sql`
    SELECT to_char(d, 'YYYY-MM-DD') AS day FROM unnest(${daySet}) d
    WHERE EXISTS (SELECT 1 FROM insights_dirty_days m WHERE m.account_id = ${accountId} AND m.day = d)
      OR NOT EXISTS (SELECT 1 FROM insights_daily r WHERE r.account_id = ${accountId} AND r.day = d AND r.channel_id = ${ALL_CHANNELS})
      OR EXISTS (SELECT 1 FROM insights_daily r WHERE r.account_id = ${accountId} AND r.day = d AND r.valid_until <= now())
    ORDER BY 1`,
  );
  await recomputeDays(
    tx,
    accountId,
    stale.map((d) => d.day),
  );
  await tx.execute(sql`DELETE FROM insights_dirty_days WHERE account_id = ${accountId} AND day = ANY(${daySet})`);
  await tx.execute(sql`INSERT INTO insights_kept_days (account_id, day) SELECT ${accountId}, d FROM unnest(${daySet}) d ON CONFLICT DO NOTHING`);
}

/**
 * Brings the account's past dirty days up to date outside any deletion's transaction, so the
 * deletion's own roll-up (keepInsightsDays) finds them current and holds its locks briefly.
 * False when another refresh of the account holds it (the deletion then recomputes what it needs).
 */
export async function refreshInsightsBeforeDeleting(db: Db, accountId: number): Promise<boolean> {
  const [range] = await rows<{ from: string | null; to: string | null }>(
    db,
    sql`SELECT to_char(min(day), 'YYYY-MM-DD') AS from, to_char(max(day), 'YYYY-MM-DD') AS to FROM insights_dirty_days WHERE account_id = ${accountId} AND day < ${TODAY}`,
  );
  if (!range?.from || !range.to) return true;
  const w = { from: range.from, to: range.to, channelId: null };
  return db.transaction((tx) => refreshRollup(tx as unknown as Db, accountId, w));
}

/**
 * The background refresh (lib/insights/refresher.ts): the past dirty days of up to `accounts`
 * accounts, each skipped when another refresh holds it. Returns how many accounts it refreshed.
 */
export async function refreshDirtyInsights(db: Db, accounts: number): Promise<number> {
  const dirty = await rows<{ account_id: number; from: string; to: string }>(
    db,
    sql`
    SELECT account_id, to_char(min(day), 'YYYY-MM-DD') AS from, to_char(max(day), 'YYYY-MM-DD') AS to
    FROM insights_dirty_days WHERE day < ${TODAY} GROUP BY account_id ORDER BY account_id LIMIT ${accounts}`,
  );
  let done = 0;
  let failed: unknown = null;
  for (const d of dirty) {
    // One account's failed refresh (a statement cut by its timeout) never keeps the others' from running.
    try {
      if (await db.transaction((tx) => refreshRollup(tx, d.account_id, { from: d.from, to: d.to, channelId: null }))) done++;
    } catch (e) {
      failed ??= e;
    }
  }
  if (failed) throw failed;
  return done;
}

/** How long a read waits for another refresh of its account before reading the rollup as it is. */
const REFRESH_WAIT_MS = 30_000;

/**
 * The insights of the account's conversations and responses CREATED in the window, per UTC day
 * (days without any row are absent) and in total (day null): the past days from the rollup
 * (refreshed first where marked dirty), today and later computed live, in one transaction. While
 * another refresh holds the account, the read gives its connection back and tries again (a pooled
 * connection waiting on the lock would let a burst of reads take the whole pool); after
 * REFRESH_WAIT_MS it reads the rollup as it is.
 */
export async function getInsightsFigures(db: Db, accountId: number, w: InsightsWindow): Promise<InsightsFigures[]> {
  const read = (tx: Db) =>
    rows<InsightsFigures>(
      tx,
      sql`${figuresFrom(sql`
        SELECT ${ROLLUP_COLUMNS} FROM insights_daily
        WHERE account_id = ${accountId} AND day >= ${w.from}::date AND day <= ${w.to}::date AND day < ${TODAY}
          AND channel_id = ${w.channelId ?? ALL_CHANNELS}
        UNION ALL
        SELECT ${ROLLUP_COLUMNS} FROM (${rollupRows(accountId, dayStart(sql`greatest(${w.from}::date, ${TODAY})`), dayStart(sql`(${w.to}::date + 1)`), null, w.channelId ?? 'all')}) live`)}`,
    );
  const until = Date.now() + REFRESH_WAIT_MS;
  for (let pause = 10; Date.now() < until; pause = Math.min(pause * 2, 250)) {
    const figures = await db.transaction(async (tx) => ((await refreshRollup(tx, accountId, w)) ? read(tx) : null));
    if (figures) return figures;
    await sleep(pause);
  }
  return read(db);
}

/** The same figures computed from the conversations and responses alone, every day live (no rollup): the reference the rollup must equal. */
export async function getLiveInsightsFigures(db: Db, accountId: number, w: InsightsWindow): Promise<InsightsFigures[]> {
  return rows<InsightsFigures>(
    db,
    figuresFrom(rollupRows(accountId, dayStart(sql`${w.from}::date`), dayStart(sql`(${w.to}::date + 1)`), null, w.channelId ?? 'all')),
  );
}

export type GapRow = {
  conversation_id: string;
  question: string;
  reason: 'declined' | 'disliked' | 'handed_off';
  lexemes: string[];
  reply: string | null;
  at: string;
};

/**
 * What the bot failed on in the window, the newest `limit` rows, one per question not dismissed (or answered) since it was asked: declined answers, disliked answers,
 * and for a handed-off conversation the last question before the handoff (its first question when
 * the visitor asked for a person straight away) with the first member reply after it. `lexemes`
 * are the question's words as the knowledge base's full-text search stems them.
 */
export async function listGapQuestions(db: Db, accountId: number, w: InsightsWindow, limit: number): Promise<GapRow[]> {
  const from = sql`(${w.from}::timestamp AT TIME ZONE 'UTC')`;
  const to = sql`((${w.to}::date + 1)::timestamp AT TIME ZONE 'UTC')`;
  const channel = (col: ReturnType<typeof sql.raw>) => (w.channelId === null ? sql`` : sql`AND ${col} = ${w.channelId}`);
  return rows<GapRow>(
    db,
    sql`
    SELECT g.conversation_id, g.question, g.reason, g.reply, ${utcText(sql`g.at`)} AS at,
      ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('english', g.question)) u ORDER BY u.lexeme) AS lexemes
    FROM (
      (SELECT r.conversation_id, r.question, CASE WHEN r.declined THEN 'declined' ELSE 'disliked' END AS reason, NULL::text AS reply, r.created_at AS at
       FROM responses r
       WHERE r.account_id = ${accountId} AND r.created_at >= ${from} AND r.created_at < ${to} AND (r.declined OR r.dislikes > 0) ${channel(sql.raw('r.channel_id'))}
       ORDER BY r.created_at DESC LIMIT ${limit})
      UNION ALL
      (SELECT c.id, q.question, 'handed_off', m.text, c.handed_off_at
       FROM conversations c
       JOIN LATERAL (
         SELECT r.question FROM responses r WHERE r.conversation_id = c.id
         ORDER BY (r.created_at <= c.handed_off_at) DESC, CASE WHEN r.created_at <= c.handed_off_at THEN r.created_at END DESC, r.created_at
         LIMIT 1
       ) q ON true
       LEFT JOIN LATERAL (
         SELECT text FROM conversation_messages cm WHERE cm.conversation_id = c.id AND cm.author = 'agent' ORDER BY cm.created_at, cm.seq LIMIT 1
       ) m ON true
       WHERE c.account_id = ${accountId} AND c.handed_off_at >= ${from} AND c.handed_off_at < ${to} ${channel(sql.raw('c.channel_id'))}
       ORDER BY c.handed_off_at DESC LIMIT ${limit})
    ) g
    WHERE NOT EXISTS (SELECT 1 FROM gap_dismissals d WHERE d.account_id = ${accountId} AND d.question = lower(btrim(g.question)) AND d.dismissed_at >= g.at)
    ORDER BY g.at DESC LIMIT ${limit}`,
  );
}

/** Hides these questions (lower-cased, trimmed) from the gaps as asked until now. */
export async function dismissGapQuestions(db: Db, accountId: number, questions: string[]) {
  if (questions.length === 0) return;
  await db.execute(sql`
    INSERT INTO gap_dismissals (account_id, question, dismissed_at)
    SELECT ${accountId}, lower(btrim(q)), now() FROM jsonb_array_elements_text(${JSON.stringify(questions)}::jsonb) q
    ON CONFLICT (account_id, question) DO UPDATE SET dismissed_at = now()`);
}
