import { sql } from 'drizzle-orm';
import { rows, type Db } from '../client';
import { utcText } from './shared';

/** UTC days, both inclusive (YYYY-MM-DD), and optionally one channel of the account. */
export type InsightsWindow = { from: string; to: string; channelId: number | null };

/** One UTC day's figures, or (day null) the whole window's. Medians and means are null when nothing was measured. */
export type ConversationFigures = {
  day: string | null;
  conversations: number;
  ai_resolved: number;
  handoffs: number;
  median_first_response_seconds: number | null;
  median_resolution_seconds: number | null;
  csat_ai_responses: number;
  csat_ai_mean: number | null;
  csat_ai_high: number;
  csat_human_responses: number;
  csat_human_mean: number | null;
  csat_human_high: number;
};
export type ResponseFigures = { day: string | null; declined_answers: number; likes: number; dislikes: number };

const IDLE_AFTER = sql`interval '30 minutes'`;

/**
 * The conversation figures of conversations CREATED in the window (docs/decisions/insights.md):
 * a person was involved when it was ever handed off or is handled by a person now; AI-resolved is
 * closed (any status but Open, Waiting, Snoozed) or idle 30 minutes, with no person and no dislike.
 * One scan per window (the account's created_at index); GROUPING SETS gives the days and the total.
 */
export async function getConversationFigures(db: Db, accountId: number, w: InsightsWindow): Promise<ConversationFigures[]> {
  return rows<ConversationFigures>(
    db,
    sql`
    WITH c AS (
      SELECT to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
        (c.handed_off_at IS NOT NULL OR c.handled_by = 'human') AS person,
        c.status NOT IN ('Open', 'Waiting', 'Snoozed') AS closed,
        c.id, c.created_at, c.updated_at, c.resolved_at, c.handed_off_at, c.first_reply_at, c.csat
      FROM conversations c
      WHERE c.account_id = ${accountId}
        AND c.created_at >= (${w.from}::timestamp AT TIME ZONE 'UTC') AND c.created_at < ((${w.to}::date + 1)::timestamp AT TIME ZONE 'UTC')
        ${w.channelId === null ? sql`` : sql`AND c.channel_id = ${w.channelId}`}
    ), f AS (
      SELECT c.*, (NOT c.person AND (c.closed OR c.updated_at <= now() - ${IDLE_AFTER})
        AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.conversation_id = c.id AND r.dislikes > 0)) AS ai_resolved,
        extract(epoch FROM c.first_reply_at - c.handed_off_at)::float8 AS first_response,
        CASE WHEN c.closed THEN extract(epoch FROM c.resolved_at - c.created_at)::float8 END AS resolution
      FROM c
    )
    SELECT day, count(*)::int AS conversations,
      count(*) FILTER (WHERE ai_resolved)::int AS ai_resolved,
      count(*) FILTER (WHERE person)::int AS handoffs,
      round(percentile_cont(0.5) WITHIN GROUP (ORDER BY first_response) FILTER (WHERE first_response >= 0))::float8 AS median_first_response_seconds,
      round(percentile_cont(0.5) WITHIN GROUP (ORDER BY resolution) FILTER (WHERE resolution >= 0))::float8 AS median_resolution_seconds,
      count(csat) FILTER (WHERE NOT person)::int AS csat_ai_responses,
      round(avg(csat) FILTER (WHERE NOT person), 2)::float8 AS csat_ai_mean,
      count(*) FILTER (WHERE NOT person AND csat >= 4)::int AS csat_ai_high,
      count(csat) FILTER (WHERE person)::int AS csat_human_responses,
      round(avg(csat) FILTER (WHERE person), 2)::float8 AS csat_human_mean,
      count(*) FILTER (WHERE person AND csat >= 4)::int AS csat_human_high
    FROM f GROUP BY GROUPING SETS ((day), ()) ORDER BY day NULLS FIRST`,
  );
}

/** Declined answers, likes and dislikes of the responses CREATED in the window, per UTC day and in total. */
export async function getResponseFigures(db: Db, accountId: number, w: InsightsWindow): Promise<ResponseFigures[]> {
  return rows<ResponseFigures>(
    db,
    sql`
    SELECT day, count(*) FILTER (WHERE declined)::int AS declined_answers,
      COALESCE(sum(likes), 0)::int AS likes, COALESCE(sum(dislikes), 0)::int AS dislikes
    FROM (
      SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, declined, likes, dislikes FROM responses
      WHERE account_id = ${accountId}
        AND created_at >= (${w.from}::timestamp AT TIME ZONE 'UTC') AND created_at < ((${w.to}::date + 1)::timestamp AT TIME ZONE 'UTC')
        ${w.channelId === null ? sql`` : sql`AND channel_id = ${w.channelId}`}
    ) r
    GROUP BY GROUPING SETS ((day), ()) ORDER BY day NULLS FIRST`,
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
 * What the bot failed on in the window, one row per question not dismissed (or answered) since it was asked: declined answers, disliked answers,
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
    WHERE NOT EXISTS (SELECT 1 FROM gap_dismissals d WHERE d.account_id = ${accountId} AND d.question = lower(btrim(g.question)) AND d.dismissed_at >= g.at)`,
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
