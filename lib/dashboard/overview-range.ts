/**
 * The overview chart's date range, kept in the page's URL: `?range=7|30|90|365|all` or
 * `?from=YYYY-MM-DD&to=YYYY-MM-DD` (UTC days, inclusive). Long ranges are drawn per week or month.
 */
export type Bucket = 'day' | 'week' | 'month';
export type RangeKey = '7' | '30' | '90' | '365' | 'all' | 'custom';
export type OverviewRange = { key: RangeKey; from: string; to: string; bucket: Bucket; days: number };

export const RANGE_CHOICES: Array<{ key: Exclude<RangeKey, 'custom'>; label: string }> = [
  { key: '7', label: '7 days' },
  { key: '30', label: '30 days' },
  { key: '90', label: '90 days' },
  { key: '365', label: '1 year' },
  { key: 'all', label: 'All time' },
];
export const DEFAULT_RANGE: RangeKey = '30';

const DAY_MS = 86_400_000;
const isDay = (s: string) =>
  /^\d{4}-\d{2}-\d{2}$/.test(s) &&
  !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) &&
  new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s &&
  s >= '1970-01-01' &&
  s <= '2199-12-31';
const toMs = (s: string) => Date.parse(`${s}T00:00:00Z`);
const fromMs = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const addDays = (day: string, n: number) => fromMs(toMs(day) + n * DAY_MS);
export const daysBetween = (from: string, to: string) => Math.round((toMs(to) - toMs(from)) / DAY_MS) + 1;

export function bucketFor(days: number): Bucket {
  return days <= 92 ? 'day' : days <= 731 ? 'week' : 'month';
}

type Params = Record<string, string | string[] | undefined>;
const one = (p: Params, k: string) => {
  const v = p[k];
  return (Array.isArray(v) ? v[0] : v) ?? '';
};

/** Reads the range from URL parameters; invalid values fall back to the last 30 days. */
export function parseOverviewRange(params: Params, today: string, span: { first: string | null; last: string | null }): OverviewRange {
  const make = (key: RangeKey, from: string, to: string): OverviewRange => {
    const days = daysBetween(from, to);
    return { key, from, to, days, bucket: bucketFor(days) };
  };
  let from = one(params, 'from');
  let to = one(params, 'to');
  if (isDay(from) || isDay(to)) {
    if (!isDay(to)) to = today > from ? today : from;
    if (!isDay(from)) from = addDays(to, -29);
    if (from > to) [from, to] = [to, from];
    return make('custom', from, to);
  }
  const range = one(params, 'range');
  if (range === 'all') {
    const last = span.last && span.last > today ? span.last : today;
    return make('all', span.first && span.first < last ? span.first : last, last);
  }
  const n = ['7', '30', '90', '365'].includes(range) ? Number(range) : Number(DEFAULT_RANGE);
  return make(String(n) as RangeKey, addDays(today, -(n - 1)), today);
}

/** The overview's query string for a range key (the default has none). */
export function rangeHref(key: Exclude<RangeKey, 'custom'>): string {
  return key === DEFAULT_RANGE ? '/' : `/?range=${key}`;
}
