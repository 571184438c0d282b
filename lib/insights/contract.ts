import { z } from 'zod';
import { channelIdParam } from '../api/params';

/** The longest window one request computes (a year and a leap day): the series stays a page's worth. */
export const MAX_INSIGHTS_DAYS = 366;

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const isDay = (s: string) => DAY_RE.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;
export const daysInWindow = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;

const dayParam = (description: string) =>
  z
    .string({ error: 'is required (YYYY-MM-DD)' })
    .refine((s) => isDay(s) && s >= '1970-01-01' && s <= '2199-12-31', 'must be a date YYYY-MM-DD from 1970-01-01 to 2199-12-31')
    .meta({ type: 'string', format: 'date', description });

export const InsightsQuery = z
  .object({
    from: dayParam('First UTC day of the window, inclusive'),
    to: dayParam('Last UTC day of the window, inclusive'),
    channel_id: channelIdParam.optional(),
  })
  .superRefine((q, ctx) => {
    if (!isDay(q.from) || !isDay(q.to)) return;
    if (q.to < q.from) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
    else if (daysInWindow(q.from, q.to) > MAX_INSIGHTS_DAYS)
      ctx.addIssue({ code: 'custom', path: ['to'], message: `must be at most ${MAX_INSIGHTS_DAYS} days after from, inclusive` });
  });
export type InsightsQuery = z.infer<typeof InsightsQuery>;

const Share = z.number().min(0).max(1);
const Csat = z.object({
  responses: z.int().min(0).meta({ description: 'Conversations rated' }),
  mean: z.number().min(1).max(5).nullable().meta({ description: 'Mean rating (1–5, two decimals); null without ratings' }),
  share_4_5: Share.nullable().meta({ description: 'Share of ratings of 4 or 5; null without ratings' }),
});

export const InsightsRecord = z
  .object({
    from: z.string().meta({ format: 'date' }),
    to: z.string().meta({ format: 'date' }),
    channel_id: z.int().nullable(),
    conversations: z.int().min(0).meta({ description: 'Conversations started in the window' }),
    ai_resolved: z.int().min(0).meta({ description: 'Of those: resolved, or idle 30 minutes, with no person involved and no dislike' }),
    ai_resolved_share: Share,
    ai_involved: z.int().min(0).meta({ description: 'Of those: the AI gave at least one answer that was not declined' }),
    ai_resolved_confirmed: z.int().min(0).meta({
      description:
        'Of the AI-resolved: the visitor liked an answer, rated the conversation 4–5, or thanked (a message of at most 80 characters of thanks, approval or goodbye, without a question mark or negation, after an answer that was not declined)',
    }),
    ai_resolved_assumed: z
      .int()
      .min(0)
      .meta({ description: 'Of the AI-resolved: the rest, with no such sign from the visitor (ai_resolved_confirmed + ai_resolved_assumed = ai_resolved)' }),
    handoffs: z.int().min(0).meta({ description: 'Of those: handed off to a person (ever) or handled by a person' }),
    handoff_rate: Share,
    median_first_response_seconds: z
      .number()
      .min(0)
      .nullable()
      .meta({ description: "Median from the handoff to a member's first reply (from per-day histograms: within 1 %, 1 s under two minutes)" }),
    median_resolution_seconds: z
      .number()
      .min(0)
      .nullable()
      .meta({ description: 'Median from the start to resolved, of resolved conversations (from per-day histograms: within 1 %, 1 s under two minutes)' }),
    csat: z.object({ ai: Csat, human: Csat }),
    declined_answers: z.int().min(0).meta({ description: 'Answers given in the window where the bot found nothing to answer with' }),
    likes: z.int().min(0),
    dislikes: z.int().min(0),
    series: z.array(z.object({ date: z.string(), conversations: z.int().min(0), handoffs: z.int().min(0), declined_answers: z.int().min(0) })),
  })
  .meta({ id: 'Insights' });
export type InsightsRecord = z.infer<typeof InsightsRecord>;

export const INSIGHTS_EXAMPLE: InsightsRecord = {
  from: '2026-01-05',
  to: '2026-01-06',
  channel_id: null,
  conversations: 40,
  ai_resolved: 30,
  ai_resolved_share: 0.75,
  ai_involved: 34,
  ai_resolved_confirmed: 12,
  ai_resolved_assumed: 18,
  handoffs: 6,
  handoff_rate: 0.15,
  median_first_response_seconds: 95,
  median_resolution_seconds: 1260,
  csat: { ai: { responses: 8, mean: 4.25, share_4_5: 0.875 }, human: { responses: 4, mean: 3.5, share_4_5: 0.5 } },
  declined_answers: 5,
  likes: 12,
  dislikes: 3,
  series: [
    { date: '2026-01-05', conversations: 22, handoffs: 4, declined_answers: 3 },
    { date: '2026-01-06', conversations: 18, handoffs: 2, declined_answers: 2 },
  ],
};
