import { listChannels } from '../../db/queries/channels';
import { getDb } from '../../db/client';
import { AppError } from '../core/errors';
import { computeInsights, parseInsightsQuery, type DayFigures } from '../insights/service';
import { GAP_GROUPS_SHOWN, readContentGaps } from '../insights/gaps';
import { suggestGapSynonyms } from '../insights/synonym-suggestions';
import type { InsightsQuery, InsightsRecord } from '../insights/contract';

/**
 * The /insights page: the API's window parameters (`from`, `to`, `channel_id`) or a preset
 * (`range=7|30|90|365`, default 30 days ending today, UTC). A bad window is shown, not thrown.
 */
export const INSIGHTS_RANGES = ['7', '30', '90', '365'] as const;
export const DEFAULT_INSIGHTS_RANGE = '30';

type Params = Record<string, string | string[] | undefined>;
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? '';

/** The window the page shows: the URL's, else a preset; a bad window is reported and the default shown. */
function windowOf(params: Params, today: string) {
  const search = new URLSearchParams();
  for (const name of ['from', 'to', 'channel_id']) if (first(params[name])) search.set(name, first(params[name]));
  let range = (INSIGHTS_RANGES as readonly string[]).includes(first(params.range)) ? first(params.range) : DEFAULT_INSIGHTS_RANGE;
  const lastDays = (n: string) => ({ from: new Date(Date.parse(`${today}T00:00:00Z`) - (Number(n) - 1) * 86_400_000).toISOString().slice(0, 10), to: today });
  let preset = !search.has('from') && !search.has('to');
  if (preset) for (const [k, v] of Object.entries(lastDays(range))) search.set(k, v);
  let error: string | null = null;
  let query: InsightsQuery;
  try {
    query = parseInsightsQuery(search);
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    error = e.message;
    preset = true;
    range = DEFAULT_INSIGHTS_RANGE;
    query = parseInsightsQuery(new URLSearchParams(lastDays(range)));
  }
  return { query, range: preset ? range : null, error };
}

export async function getInsightsPage(accountId: number, params: Params, today = new Date().toISOString().slice(0, 10)) {
  const { query, range, error } = windowOf(params, today);
  const [{ record, days }, channels] = await Promise.all([computeInsights(accountId, query, 'primary'), listChannels(await getDb(), accountId)]);
  return { record, days, channels, range, error };
}

/** /insights/gaps: the same window parameters. */
export async function getGapsPage(accountId: number, params: Params, today = new Date().toISOString().slice(0, 10)) {
  const { query, range, error } = windowOf(params, today);
  const { groups: all, read, capped } = await readContentGaps(accountId, query);
  const groups = all.slice(0, GAP_GROUPS_SHOWN);
  const suggestions = await suggestGapSynonyms(accountId, groups);
  return { query, range, error, read, capped, total: all.length, groups: groups.map((g, i) => ({ ...g, synonyms: suggestions[i]! })) };
}

/** The distinct synonym suggestions of the default window's gaps (section "Synonyms" of /knowledge). */
export async function getGapSynonymSuggestions(accountId: number, today = new Date().toISOString().slice(0, 10)) {
  const { groups } = await getGapsPage(accountId, {}, today);
  const seen = new Set<string>();
  return groups.flatMap((g) => g.synonyms).filter((s) => !seen.has(s.word) && !!seen.add(s.word));
}

/** What the page writes for each value (the tests compare the page with the API through these). */
export const formatCount = (n: number) => n.toLocaleString('en');
export const formatShare = (s: number | null) => (s === null ? '—' : `${(s * 100).toFixed(1)}%`);
export const formatMean = (m: number | null) => (m === null ? '—' : m.toFixed(2));
export function formatSeconds(s: number | null): string {
  if (s === null) return '—';
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

type Series = { label: string; values: Array<number | null> };
export type Figure = {
  key: string;
  title: string;
  value: string;
  detail?: string;
  definition: string;
  unit: 'count' | 'share' | 'seconds' | 'rating';
  series: Series[];
};

/** Every figure of the contract (docs/contracts.md §15): its value, its definition and its per-day series. */
export function figuresOf(r: InsightsRecord, days: DayFigures[]): Figure[] {
  const per = (label: string, pick: (d: DayFigures) => number | null): Series => ({ label, values: days.map(pick) });
  const csat = (who: 'ai' | 'human', title: string, which: string): Figure => ({
    key: `csat_${who}`,
    title,
    value: formatMean(r.csat[who].mean),
    detail: `${formatShare(r.csat[who].share_4_5)} rated 4–5 · ${formatCount(r.csat[who].responses)} ${r.csat[who].responses === 1 ? 'rating' : 'ratings'}`,
    definition: `Mean rating (1–5) visitors gave conversations ${which}, and the share of 4 and 5.`,
    unit: 'rating',
    series: [per('Mean rating', (d) => d.csat[who].mean)],
  });
  return [
    {
      key: 'conversations',
      title: 'Conversations',
      value: formatCount(r.conversations),
      definition: 'Conversations started in the range (UTC days).',
      unit: 'count',
      series: [per('Conversations', (d) => d.conversations)],
    },
    {
      key: 'ai_involved',
      title: 'AI involved',
      value: formatCount(r.ai_involved),
      detail: `of ${formatCount(r.conversations)} conversations`,
      definition: 'Conversations in which the AI gave at least one answer (declined answers do not count).',
      unit: 'count',
      series: [per('AI involved', (d) => d.ai_involved)],
    },
    {
      key: 'ai_resolved_share',
      title: 'AI-resolved',
      value: formatShare(r.ai_resolved_share),
      detail: `${formatCount(r.ai_resolved)} of ${formatCount(r.conversations)}`,
      definition: 'Share of those conversations resolved, or idle for 30 minutes, with no person involved and no answer disliked.',
      unit: 'share',
      series: [per('AI-resolved', (d) => d.ai_resolved_share)],
    },
    {
      key: 'ai_resolved_confirmed',
      title: 'AI-resolved, confirmed',
      value: formatCount(r.ai_resolved_confirmed),
      detail: `of ${formatCount(r.ai_resolved)} AI-resolved`,
      definition:
        'AI-resolved conversations where the visitor liked an answer, rated the conversation 4–5, or thanked after an answer (a short message of thanks, approval or goodbye, with no question or negation).',
      unit: 'count',
      series: [per('Confirmed', (d) => d.ai_resolved_confirmed)],
    },
    {
      key: 'ai_resolved_assumed',
      title: 'AI-resolved, assumed',
      value: formatCount(r.ai_resolved_assumed),
      detail: `of ${formatCount(r.ai_resolved)} AI-resolved`,
      definition: 'The other AI-resolved conversations: closed or idle without a person, but the visitor gave no sign that the answer helped.',
      unit: 'count',
      series: [per('Assumed', (d) => d.ai_resolved_assumed)],
    },
    {
      key: 'handoff_rate',
      title: 'Handoff rate',
      value: formatShare(r.handoff_rate),
      detail: `${formatCount(r.handoffs)} handed off`,
      definition: 'Share of those conversations handed off to a person (at any time) or handled by a person.',
      unit: 'share',
      series: [per('Handoff rate', (d) => d.handoff_rate)],
    },
    {
      key: 'median_first_response_seconds',
      title: 'First response after handoff',
      value: formatSeconds(r.median_first_response_seconds),
      definition:
        "Median time from a conversation's first handoff to the first reply of a team member. Each day's is exact; a window's comes from per-day histograms: within 1 % (1 s under two minutes).",
      unit: 'seconds',
      series: [per('Median first response', (d) => d.median_first_response_seconds)],
    },
    {
      key: 'median_resolution_seconds',
      title: 'Time to resolve',
      value: formatSeconds(r.median_resolution_seconds),
      definition:
        "Median time from the start of a conversation to its resolution, over the resolved ones. Each day's is exact; a window's comes from per-day histograms: within 1 % (1 s under two minutes).",
      unit: 'seconds',
      series: [per('Median time to resolve', (d) => d.median_resolution_seconds)],
    },
    csat('ai', 'CSAT, AI only', 'no person was involved in'),
    csat('human', 'CSAT, person handled', 'a person was involved in'),
    {
      key: 'declined_answers',
      title: 'Declined answers',
      value: formatCount(r.declined_answers),
      definition: 'Answers given in the range where the bot found nothing in the knowledge base and said so.',
      unit: 'count',
      series: [per('Declined answers', (d) => d.declined_answers)],
    },
    {
      key: 'likes',
      title: 'Likes and dislikes',
      value: `${formatCount(r.likes)} / ${formatCount(r.dislikes)}`,
      detail: 'likes / dislikes',
      definition: 'Likes and dislikes visitors gave the answers given in the range.',
      unit: 'count',
      series: [per('Likes', (d) => d.likes), per('Dislikes', (d) => d.dislikes)],
    },
  ];
}
