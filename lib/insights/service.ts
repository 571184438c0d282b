import { onReadDb, type ReadTarget } from '../../db/read';
import { getInsightsFigures, type InsightsFigures } from '../../db/queries/insights';
import { AppError } from '../core/errors';
import { describeIssues, issueParams } from '../zod-issues';
import { InsightsQuery, type InsightsRecord } from './contract';

/** A share 0–1 to four decimals; 0 when there is nothing to divide. */
const share = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

const EMPTY: Omit<InsightsFigures, 'day'> = {
  conversations: 0,
  ai_resolved: 0,
  ai_involved: 0,
  ai_resolved_confirmed: 0,
  handoffs: 0,
  median_first_response_seconds: null,
  median_resolution_seconds: null,
  csat_ai_responses: 0,
  csat_ai_mean: null,
  csat_ai_high: 0,
  csat_human_responses: 0,
  csat_human_mean: null,
  csat_human_high: 0,
  declined_answers: 0,
  likes: 0,
  dislikes: 0,
};

/** The contract's figures of one day or of the whole window, from the query's rows. */
function figuresOf(c: Omit<InsightsFigures, 'day'>) {
  const csat = (responses: number, mean: number | null, high: number) => ({
    responses,
    mean: responses === 0 ? null : mean,
    share_4_5: responses === 0 ? null : share(high, responses),
  });
  return {
    conversations: c.conversations,
    ai_resolved: c.ai_resolved,
    ai_resolved_share: share(c.ai_resolved, c.conversations),
    ai_involved: c.ai_involved,
    ai_resolved_confirmed: c.ai_resolved_confirmed,
    ai_resolved_assumed: c.ai_resolved - c.ai_resolved_confirmed,
    handoffs: c.handoffs,
    handoff_rate: share(c.handoffs, c.conversations),
    median_first_response_seconds: c.median_first_response_seconds,
    median_resolution_seconds: c.median_resolution_seconds,
    csat: { ai: csat(c.csat_ai_responses, c.csat_ai_mean, c.csat_ai_high), human: csat(c.csat_human_responses, c.csat_human_mean, c.csat_human_high) },
    declined_answers: c.declined_answers,
    likes: c.likes,
    dislikes: c.dislikes,
  };
}
export type DayFigures = ReturnType<typeof figuresOf> & { date: string };

function* daysOf(from: string, to: string) {
  for (let ms = Date.parse(`${from}T00:00:00Z`); ms <= Date.parse(`${to}T00:00:00Z`); ms += 86_400_000) yield new Date(ms).toISOString().slice(0, 10);
}

/**
 * The insights of one account for a validated window: the API's record and every figure per UTC
 * day (the page's charts). Both come from the same query, so the page and the API agree.
 */
export async function computeInsights(accountId: number, q: InsightsQuery, target: ReadTarget): Promise<{ record: InsightsRecord; days: DayFigures[] }> {
  const window = { from: q.from, to: q.to, channelId: q.channel_id ?? null };
  const byDay = new Map((await onReadDb(target, (db) => getInsightsFigures(db, accountId, window))).map((row) => [row.day, row]));
  const days = [...daysOf(q.from, q.to)].map((date) => ({ date, ...figuresOf(byDay.get(date) ?? EMPTY) }));
  const record: InsightsRecord = {
    from: q.from,
    to: q.to,
    channel_id: window.channelId,
    ...figuresOf(byDay.get(null) ?? EMPTY),
    series: days.map((d) => ({ date: d.date, conversations: d.conversations, handoffs: d.handoffs, declined_answers: d.declined_answers })),
  };
  return { record, days };
}

/** Reads the window from a query string (first non-empty value of each name); one 400 naming every bad parameter. */
export function parseInsightsQuery(params: URLSearchParams): InsightsQuery {
  const raw: Record<string, string> = {};
  for (const name of Object.keys(InsightsQuery.shape)) {
    const value = params.getAll(name).find((v) => v !== '');
    if (value !== undefined) raw[name] = value;
  }
  const parsed = InsightsQuery.safeParse(raw);
  if (!parsed.success) {
    const errors = issueParams(parsed.error, { fallback: 'from' });
    throw new AppError('invalid_parameters', describeIssues(errors), { errors });
  }
  return parsed.data;
}

/** GET /customer-api/v2/insights. */
export async function getInsights(accountId: number, params: URLSearchParams, target: ReadTarget): Promise<InsightsRecord> {
  return (await computeInsights(accountId, parseInsightsQuery(params), target)).record;
}
